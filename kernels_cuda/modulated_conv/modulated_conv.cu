#include "kernels_cuda/modulated_conv/modulated_conv.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "kernels_cuda/common/activation.cuh"
#include "kernels_cuda/common/cuda_check.h"

namespace edgegan::cuda {
namespace {

constexpr int kThreads = 256;
int blocks_for(long long n) { return static_cast<int>(std::max<long long>(1, std::min<long long>((n + kThreads - 1) / kThreads, 1 << 20))); }

__global__ void demodulation_kernel(int batch, int in_channels, int out_channels, const float* __restrict__ style,
                                    const float* __restrict__ wsq, float epsilon, float* __restrict__ coefficients) {
  const long long count = static_cast<long long>(batch) * out_channels;
  for (long long k = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; k < count; k += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long n = k / out_channels, o = k % out_channels;
    const float* s = style + n * in_channels;
    const float* w = wsq + o * in_channels;
    float sum = 0.f;
    for (int i = 0; i < in_channels; ++i) sum = fmaf(s[i] * s[i], __ldg(w + i), sum);
    coefficients[k] = rsqrtf(sum + epsilon);
  }
}

__global__ void scale_input_kernel(long long count, long long per_sample, int channels, const float* __restrict__ style,
                                   const float* x, float* y) {
  for (long long k = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; k < count; k += static_cast<long long>(gridDim.x) * blockDim.x)
    y[k] = x[k] * __ldg(style + (k / per_sample) * channels + k % channels);
}

__global__ void finish_output_kernel(long long count, long long per_sample, int channels, const float* __restrict__ coefficients,
                                     const float* __restrict__ bias, float* y, ActivationParams activation) {
  for (long long k = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; k < count; k += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long c = k % channels;
    float v = y[k];
    if (coefficients) v *= __ldg(coefficients + (k / per_sample) * channels + c);
    if (bias) v += __ldg(bias + c);
    y[k] = activate(v, activation);
  }
}

}  // namespace

void modulated_conv_demodulation(int batch, int in_channels, int out_channels, const float* style, const float* wsq,
                                 float epsilon, float* coefficients, cudaStream_t stream) {
  const long long count = static_cast<long long>(batch) * out_channels;
  if (count <= 0) return;
  demodulation_kernel<<<blocks_for(count), kThreads, 0, stream>>>(batch, in_channels, out_channels, style, wsq, epsilon, coefficients);
  check_cuda(cudaGetLastError(), "modulated_conv_demodulation launch");
}

void modulated_conv_scale_input(int batch, long long pixels, int channels, const float* style, const float* x, float* y,
                                cudaStream_t stream) {
  const long long per_sample = pixels * channels, count = per_sample * batch;
  if (count <= 0) return;
  scale_input_kernel<<<blocks_for(count), kThreads, 0, stream>>>(count, per_sample, channels, style, x, y);
  check_cuda(cudaGetLastError(), "modulated_conv_scale_input launch");
}

void modulated_conv_finish_output(int batch, long long pixels, int channels, const float* coefficients, const float* bias,
                                  float* y, ActivationParams activation, cudaStream_t stream) {
  const long long per_sample = pixels * channels, count = per_sample * batch;
  if (count <= 0) return;
  finish_output_kernel<<<blocks_for(count), kThreads, 0, stream>>>(count, per_sample, channels, coefficients, bias, y, activation);
  check_cuda(cudaGetLastError(), "modulated_conv_finish_output launch");
}

}  // namespace edgegan::cuda
