#include "kernels_cuda/elementwise/elementwise.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "kernels_cuda/common/activation.cuh"
#include "kernels_cuda/common/cuda_check.h"

namespace edgegan::cuda {
namespace {

constexpr int kThreads = 256;
int blocks_for(long long n) { return static_cast<int>(std::max<long long>(1, std::min<long long>((n + kThreads - 1) / kThreads, 1 << 20))); }

__global__ void activation_kernel(long long count, const float* x, float* y, ActivationParams activation) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count; i += static_cast<long long>(gridDim.x) * blockDim.x)
    y[i] = activate(x[i], activation);
}

__global__ void channel_affine_kernel(long long count, int channels, const float* __restrict__ scale, const float* __restrict__ shift,
                                      const float* x, float* y, ActivationParams activation) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const int c = static_cast<int>(i % channels);
    y[i] = activate(fmaf(x[i], __ldg(scale + c), __ldg(shift + c)), activation);
  }
}

}  // namespace

void activation(long long count, const float* x, float* y, ActivationParams act, cudaStream_t stream) {
  if (count <= 0) return;
  activation_kernel<<<blocks_for(count), kThreads, 0, stream>>>(count, x, y, act);
  check_cuda(cudaGetLastError(), "activation launch");
}

void channel_affine(long long pixels, int channels, const float* scale, const float* shift, const float* x, float* y, ActivationParams act,
                    cudaStream_t stream) {
  const long long count = pixels * channels;
  if (count <= 0) return;
  channel_affine_kernel<<<blocks_for(count), kThreads, 0, stream>>>(count, channels, scale, shift, x, y, act);
  check_cuda(cudaGetLastError(), "channel affine launch");
}

}  // namespace edgegan::cuda
