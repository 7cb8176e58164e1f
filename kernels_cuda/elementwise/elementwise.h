// Element-wise kernels: an activation that had no producer to fuse into, and a
// per-channel affine map (a BatchNorm that had none either).
#pragma once

#include <cuda_runtime_api.h>

#include "kernels_cuda/common/activation.h"

namespace edgegan::cuda {

// y[i] = act(x[i]), i < count (x == y allowed).
void activation(long long count, const float* x, float* y, ActivationParams activation, cudaStream_t stream);

// y[p][c] = act(x[p][c] * scale[c] + shift[c]) over `pixels` rows of `channels` (x == y allowed).
void channel_affine(long long pixels, int channels, const float* scale, const float* shift, const float* x, float* y,
                    ActivationParams activation, cudaStream_t stream);

}  // namespace edgegan::cuda
