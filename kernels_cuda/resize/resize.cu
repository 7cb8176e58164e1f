#include "kernels_cuda/resize/resize.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "kernels_cuda/common/cuda_check.h"

namespace edgegan::cuda {
namespace {

constexpr int kThreads = 256;
int blocks_for(long long n) { return static_cast<int>(std::max<long long>(1, std::min<long long>((n + kThreads - 1) / kThreads, 1 << 20))); }

struct Dims {
  long long channels, in_h, in_w, out_h, out_w;
};

__global__ void nearest_kernel(long long count, Dims d, const int32_t* __restrict__ h_index, const int32_t* __restrict__ w_index,
                               const float* __restrict__ x, float* __restrict__ y) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long c = i % d.channels, pixel = i / d.channels;
    const long long ow = pixel % d.out_w, row = pixel / d.out_w;
    const long long oh = row % d.out_h, n = row / d.out_h;
    y[i] = x[((n * d.in_h + __ldg(h_index + oh)) * d.in_w + __ldg(w_index + ow)) * d.channels + c];
  }
}

// Taps = 2 (linear) or 4 (cubic). The sums run in the CPU kernel's order (H taps first
// per W tap, then the W taps), so results differ from it only by rounding of fused
// multiply-adds.
template <int Taps>
__global__ void blend_kernel(long long count, Dims d, const int32_t* __restrict__ h_index, const float* __restrict__ h_weight,
                             const int32_t* __restrict__ w_index, const float* __restrict__ w_weight, const float* __restrict__ x,
                             float* __restrict__ y) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long c = i % d.channels, pixel = i / d.channels;
    const long long ow = pixel % d.out_w, row = pixel / d.out_w;
    const long long oh = row % d.out_h, n = row / d.out_h;
    const float* rows[Taps];
    float hw[Taps];
#pragma unroll
    for (int k = 0; k < Taps; ++k) {
      rows[k] = x + (n * d.in_h + __ldg(h_index + oh * Taps + k)) * d.in_w * d.channels + c;
      hw[k] = __ldg(h_weight + oh * Taps + k);
    }
    float out = 0.f;
#pragma unroll
    for (int j = 0; j < Taps; ++j) {
      const long long at = static_cast<long long>(__ldg(w_index + ow * Taps + j)) * d.channels;
      float blend = hw[0] * rows[0][at];
#pragma unroll
      for (int k = 1; k < Taps; ++k) blend += hw[k] * rows[k][at];
      const float ww = __ldg(w_weight + ow * Taps + j);
      out = j == 0 ? ww * blend : out + ww * blend;
    }
    y[i] = out;
  }
}

}  // namespace

void resize(const kernels::ResizeShape& s, const ResizeDeviceTables& t, const float* x, float* y, cudaStream_t stream) {
  const long long count = s.batch * s.h.out * s.w.out * s.channels;
  if (count <= 0) return;
  const Dims d{s.channels, s.h.in, s.w.in, s.h.out, s.w.out};
  const int blocks = blocks_for(count);
  switch (s.params.mode) {
    case kernels::ResizeMode::kNearest: nearest_kernel<<<blocks, kThreads, 0, stream>>>(count, d, t.h_index, t.w_index, x, y); break;
    case kernels::ResizeMode::kLinear:
      blend_kernel<2><<<blocks, kThreads, 0, stream>>>(count, d, t.h_index, t.h_weight, t.w_index, t.w_weight, x, y);
      break;
    case kernels::ResizeMode::kCubic:
      blend_kernel<4><<<blocks, kThreads, 0, stream>>>(count, d, t.h_index, t.h_weight, t.w_index, t.w_weight, x, y);
      break;
  }
  check_cuda(cudaGetLastError(), "resize launch");
}

}  // namespace edgegan::cuda
