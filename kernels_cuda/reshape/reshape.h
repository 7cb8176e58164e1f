// Re-ordering a tensor between NHWC storage and logical (NCHW) order: a batched
// transpose of each sample's [rows][cols] matrix.
#pragma once

#include <cuda_runtime_api.h>

namespace edgegan::cuda {

// y[n][c][r] = x[n][r][c] for n < batch, r < rows, c < cols (x != y).
// NHWC -> NCHW: rows = H*W, cols = C; NCHW -> NHWC: rows = C, cols = H*W.
void transpose_samples(long long batch, long long rows, long long cols, const float* x, float* y, cudaStream_t stream);

}  // namespace edgegan::cuda
