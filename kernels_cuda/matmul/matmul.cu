#include "kernels_cuda/matmul/matmul.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "kernels_cuda/common/cuda_check.h"

namespace edgegan::cuda {
namespace {


constexpr int kTile = 16;

// Block (x, y) of matrix z computes a kTile x kTile tile of y; k in tiles through shared memory.
__global__ void matmul_kernel(kernels::MatMulShape s, const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ y) {
  __shared__ float ta[kTile][kTile + 1], tb[kTile][kTile + 1];
  const long long z = blockIdx.z, b0 = z / s.batch[1], b1 = z % s.batch[1];
  const float* pa = a + b0 * s.a.batch[0] + b1 * s.a.batch[1];
  const float* pb = b + b0 * s.b.batch[0] + b1 * s.b.batch[1];
  const long long row = static_cast<long long>(blockIdx.y) * kTile + threadIdx.y, col = static_cast<long long>(blockIdx.x) * kTile + threadIdx.x;
  float acc = 0.f;
  for (long long k0 = 0; k0 < s.k; k0 += kTile) {
    const long long ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
    ta[threadIdx.y][threadIdx.x] = row < s.m && ka < s.k ? pa[row * s.a.row + ka * s.a.col] : 0.f;
    tb[threadIdx.y][threadIdx.x] = kb < s.k && col < s.n ? pb[kb * s.b.row + col * s.b.col] : 0.f;
    __syncthreads();
    for (int k = 0; k < kTile; ++k) acc = fmaf(ta[threadIdx.y][k], tb[k][threadIdx.x], acc);
    __syncthreads();
  }
  if (row < s.m && col < s.n) y[b0 * s.y.batch[0] + b1 * s.y.batch[1] + row * s.y.row + col * s.y.col] = acc;
}

}  // namespace

void matmul(const kernels::MatMulShape& s, const float* a, const float* b, float* y, cudaStream_t stream) {
  const long long matrices = s.batch[0] * s.batch[1];
  if (matrices <= 0 || s.m <= 0 || s.n <= 0) return;
  if (matrices > 65535 || (s.m + kTile - 1) / kTile > 65535) throw CudaError("matmul: more than 65535 matrices or row tiles");
  const dim3 grid(static_cast<unsigned>((s.n + kTile - 1) / kTile), static_cast<unsigned>((s.m + kTile - 1) / kTile), static_cast<unsigned>(matrices));
  matmul_kernel<<<grid, dim3(kTile, kTile), 0, stream>>>(s, a, b, y);
  check_cuda(cudaGetLastError(), "matmul launch");
}

}  // namespace edgegan::cuda
