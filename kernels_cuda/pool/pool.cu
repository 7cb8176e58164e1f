#include "kernels_cuda/pool/pool.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "kernels_cuda/common/cuda_check.h"

namespace edgegan::cuda {
namespace {

constexpr int kThreads = 256;
int blocks_for(long long n) { return static_cast<int>(std::max<long long>(1, std::min<long long>((n + kThreads - 1) / kThreads, 1 << 20))); }

// The taps t in [first, last) of one axis's window at output o that fall inside the
// input (as kernels_cpu/pool/pool.cpp's valid_taps).
struct TapRange {
  long long first, last;
};

__device__ TapRange valid_taps(const kernels::ConvAxis& a, long long o) {
  const long long start = o * a.stride - a.pad_begin;
  TapRange r;
  r.first = start >= 0 ? 0 : (-start + a.dilation - 1) / a.dilation;
  const long long past = a.in - start <= 0 ? 0 : (a.in - start + a.dilation - 1) / a.dilation;
  r.last = a.kernel < past ? a.kernel : past;
  if (r.last < r.first) r.last = r.first;
  return r;
}

// The average's divisor along one axis: taps inside the input, or (count_include_pad)
// inside the padded input [-pad_begin, in + pad_end).
__device__ long long axis_count(const kernels::ConvAxis& a, long long o, const TapRange& valid, bool include_pad) {
  if (!include_pad) return valid.last - valid.first;
  const long long start = o * a.stride - a.pad_begin;
  const long long window_end = start + (a.kernel - 1) * a.dilation + 1, padded_end = a.in + a.pad_end;
  const long long end = window_end < padded_end ? window_end : padded_end;
  return (end - start + a.dilation - 1) / a.dilation;
}

template <bool Max>
__global__ void pool_kernel(long long count, kernels::PoolShape s, bool include_pad, const float* __restrict__ x, float* __restrict__ y) {
  const long long channels = s.channels;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long c = i % channels, pixel = i / channels;
    const long long ow = pixel % s.w.out, row = pixel / s.w.out;
    const long long oh = row % s.h.out, n = row / s.h.out;
    const TapRange th = valid_taps(s.h, oh), tw = valid_taps(s.w, ow);
    const long long h0 = oh * s.h.stride - s.h.pad_begin, w0 = ow * s.w.stride - s.w.pad_begin;
    const float* xs = x + n * s.h.in * s.w.in * channels + c;
    if (Max) {
      // Larger, or NaN, takes the place (PyTorch's rule, as the CPU); a window wholly in
      // the padding gives 0.
      float m = th.first == th.last || tw.first == tw.last ? 0.f : -INFINITY;
      for (long long kh = th.first; kh < th.last; ++kh)
        for (long long kw = tw.first; kw < tw.last; ++kw) {
          const float v = xs[((h0 + kh * s.h.dilation) * s.w.in + (w0 + kw * s.w.dilation)) * channels];
          m = v > m || v != v ? v : m;
        }
      y[i] = m;
    } else {
      float sum = 0.f;  // in the CPU's tap order
      for (long long kh = th.first; kh < th.last; ++kh)
        for (long long kw = tw.first; kw < tw.last; ++kw) sum += xs[((h0 + kh * s.h.dilation) * s.w.in + (w0 + kw * s.w.dilation)) * channels];
      const long long divisor = axis_count(s.h, oh, th, include_pad) * axis_count(s.w, ow, tw, include_pad);
      const float inv = divisor > 0 ? 1.f / static_cast<float>(divisor) : 0.f;
      y[i] = sum * inv;
    }
  }
}

}  // namespace

void pool(const kernels::PoolShape& s, kernels::PoolKind kind, bool count_include_pad, const float* x, float* y, cudaStream_t stream) {
  const long long count = s.batch * s.h.out * s.w.out * s.channels;
  if (count <= 0) return;
  if (kind == kernels::PoolKind::kMax) pool_kernel<true><<<blocks_for(count), kThreads, 0, stream>>>(count, s, count_include_pad, x, y);
  else pool_kernel<false><<<blocks_for(count), kThreads, 0, stream>>>(count, s, count_include_pad, x, y);
  check_cuda(cudaGetLastError(), "pool launch");
}

}  // namespace edgegan::cuda
