#include "kernels_cuda/slice/slice.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "kernels_cuda/common/cuda_check.h"

namespace edgegan::cuda {
namespace {

constexpr int kThreads = 256;
int blocks_for(long long n) { return static_cast<int>(std::max<long long>(1, std::min<long long>((n + kThreads - 1) / kThreads, 1 << 20))); }

__global__ void slice_kernel(long long total, kernels::SliceShape s, const float* __restrict__ x, float* __restrict__ y) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long k = i % s.inner, row = i / s.inner;
    const long long j = row % s.count, o = row / s.count;
    y[i] = x[(o * s.length + s.start + j * s.step) * s.inner + k];
  }
}

}  // namespace

void slice(const kernels::SliceShape& s, const float* x, float* y, cudaStream_t stream) {
  const long long total = s.outer * s.count * s.inner;
  if (total <= 0) return;
  slice_kernel<<<blocks_for(total), kThreads, 0, stream>>>(total, s, x, y);
  check_cuda(cudaGetLastError(), "slice launch");
}

}  // namespace edgegan::cuda
