// Group normalisation of an NHWC map on the GPU (kernels_cpu/group_norm/group_norm.h
// defines it): per image and group of channels/groups consecutive channels, the mean
// and biased variance over the group's pixels and channels, then
// y = act((x - mean) / sqrt(var + epsilon) * scale[c] + shift[c]) (+ residual).
// Statistics in two passes: blocks over (chunk of pixels, image) sum each channel's
// values and squares (shifted by the group's first element) with coalesced reads, then
// one block per (image, group) adds its channels' chunk sums in a fixed tree: no
// atomics, the same bits on every run. Then one element-wise pass applies them.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels_cuda/common/activation.h"

namespace edgegan::cuda {

// The first pass has a row of blocks per sample (the grid's y, at most 65535 on CUDA).
constexpr int kGroupNormMaxBatch = 65535;

struct GroupNormGeometry {
  int batch = 1;          // at most kGroupNormMaxBatch
  long long pixels = 1;  // H * W
  int channels = 1;      // a multiple of groups
  int groups = 1;
  int chunks = 1;        // pixel chunks of the first pass (group_norm_chunks)
};

// Chunks that give the first pass enough blocks for `multiprocessors` (fixed when the
// kernel is built: the workspace depends on it).
int group_norm_chunks(const GroupNormGeometry& g, int multiprocessors);

// Scratch of group_norm, in floats: the partial sums and three per (image, group).
long long group_norm_workspace_floats(const GroupNormGeometry& g);

// x == y (in place) is allowed, and so is y == residual (each element is read before it
// is written, by the thread that writes it). residual may be null.
void group_norm(const GroupNormGeometry& g, const float* x, const float* scale, const float* shift, float epsilon, float* y,
                ActivationParams activation, const float* residual, float* workspace, cudaStream_t stream);

}  // namespace edgegan::cuda
