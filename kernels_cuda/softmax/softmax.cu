#include "kernels_cuda/softmax/softmax.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "kernels_cuda/common/cuda_check.h"

namespace edgegan::cuda {
namespace {

constexpr int kThreads = 256;
int blocks_for(long long n) { return static_cast<int>(std::max<long long>(1, std::min<long long>((n + kThreads - 1) / kThreads, 1 << 20))); }

__global__ void softmax_kernel(long long lines, kernels::SoftmaxShape s, const float* __restrict__ x, float* __restrict__ y) {
  for (long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; t < lines; t += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long base = (t / s.inner) * s.axis * s.inner + t % s.inner;
    float m = -INFINITY;
    for (long long a = 0; a < s.axis; ++a) m = fmaxf(m, x[base + a * s.inner]);
    float sum = 0.f;
    for (long long a = 0; a < s.axis; ++a) sum += (y[base + a * s.inner] = expf(x[base + a * s.inner] - m));
    const float r = 1.f / sum;
    for (long long a = 0; a < s.axis; ++a) y[base + a * s.inner] *= r;
  }
}

}  // namespace

void softmax(const kernels::SoftmaxShape& s, const float* x, float* y, cudaStream_t stream) {
  const long long lines = s.outer * s.inner;
  if (lines <= 0 || s.axis <= 0) return;
  softmax_kernel<<<blocks_for(lines), kThreads, 0, stream>>>(lines, s, x, y);
  check_cuda(cudaGetLastError(), "softmax launch");
}

}  // namespace edgegan::cuda
