#include "kernels_cuda/prelu/prelu.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "kernels_cuda/common/cuda_check.h"

namespace edgegan::cuda {
namespace {

constexpr int kThreads = 256;
int blocks_for(long long n) { return static_cast<int>(std::max<long long>(1, std::min<long long>((n + kThreads - 1) / kThreads, 1 << 20))); }

__global__ void prelu_kernel(long long count, long long channels, const float* __restrict__ slope, const float* x, float* y) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const float v = x[i];
    y[i] = v > 0.f ? v : __ldg(slope + i % channels) * v;
  }
}

}  // namespace

void prelu(long long pixels, long long channels, const float* slope, const float* x, float* y, cudaStream_t stream) {
  const long long count = pixels * channels;
  if (count <= 0) return;
  prelu_kernel<<<blocks_for(count), kThreads, 0, stream>>>(count, channels, slope, x, y);
  check_cuda(cudaGetLastError(), "prelu launch");
}

}  // namespace edgegan::cuda
