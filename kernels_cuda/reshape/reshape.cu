#include "kernels_cuda/reshape/reshape.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "kernels_cuda/common/cuda_check.h"

namespace edgegan::cuda {
namespace {

constexpr int kTile = 32;

// 32 x 32 tiles through shared memory, so both the reads and the writes coalesce.
__global__ void transpose_kernel(long long rows, long long cols, const float* __restrict__ x, float* __restrict__ y) {
  __shared__ float tile[kTile][kTile + 1];
  const long long sample = blockIdx.z;
  const float* xs = x + sample * rows * cols;
  float* ys = y + sample * rows * cols;
  for (long long r0 = static_cast<long long>(blockIdx.y) * kTile; r0 < rows; r0 += static_cast<long long>(gridDim.y) * kTile)
    for (long long c0 = static_cast<long long>(blockIdx.x) * kTile; c0 < cols; c0 += static_cast<long long>(gridDim.x) * kTile) {
      for (int i = threadIdx.y; i < kTile; i += blockDim.y) {
        const long long r = r0 + i, c = c0 + threadIdx.x;
        if (r < rows && c < cols) tile[i][threadIdx.x] = xs[r * cols + c];
      }
      __syncthreads();
      for (int i = threadIdx.y; i < kTile; i += blockDim.y) {
        const long long c = c0 + i, r = r0 + threadIdx.x;
        if (r < rows && c < cols) ys[c * rows + r] = tile[threadIdx.x][i];
      }
      __syncthreads();
    }
}

}  // namespace

void transpose_samples(long long batch, long long rows, long long cols, const float* x, float* y, cudaStream_t stream) {
  if (batch <= 0 || rows <= 0 || cols <= 0) return;
  const dim3 grid(static_cast<unsigned>(std::min<long long>((cols + kTile - 1) / kTile, 65535)),
                  static_cast<unsigned>(std::min<long long>((rows + kTile - 1) / kTile, 65535)), static_cast<unsigned>(batch));
  transpose_kernel<<<grid, dim3(kTile, 8), 0, stream>>>(rows, cols, x, y);
  check_cuda(cudaGetLastError(), "transpose launch");
}

}  // namespace edgegan::cuda
