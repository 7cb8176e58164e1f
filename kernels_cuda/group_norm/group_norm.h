// Group normalisation of an NHWC map on the GPU (kernels_cpu/group_norm/group_norm.h
// defines it): per image and group of channels/groups consecutive channels, the mean
// and biased variance over the group's pixels and channels, then
// y = act((x - mean) / sqrt(var + epsilon) * scale[c] + shift[c]) (+ residual).
// Statistics: one block per (image, group), two passes over the group (the mean, then
// the squared deviations from it), each thread summing a fixed set of elements and the
// block combining them in a fixed tree in shared memory: no atomics, the same bits on
// every run. Then one element-wise pass applies them.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels_cuda/common/activation.h"

namespace edgegan::cuda {

struct GroupNormGeometry {
  int batch = 1;
  long long pixels = 1;  // H * W
  int channels = 1;      // a multiple of groups
  int groups = 1;
};

// Scratch of group_norm, in floats: three per (image, group).
long long group_norm_workspace_floats(const GroupNormGeometry& g);

// x == y (in place) is allowed, and so is y == residual (each element is read before it
// is written, by the thread that writes it). residual may be null.
void group_norm(const GroupNormGeometry& g, const float* x, const float* scale, const float* shift, float epsilon, float* y,
                ActivationParams activation, const float* residual, float* workspace, cudaStream_t stream);

}  // namespace edgegan::cuda
