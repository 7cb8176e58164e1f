#include "kernels_cuda/conv2d/conv2d.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "kernels_cuda/common/activation.cuh"
#include "kernels_cuda/common/cuda_check.h"
#include "kernels_cuda/common/nhwc.cuh"

namespace edgegan::cuda {
namespace {

constexpr int kThreads = 256;
int blocks_for(long long n) { return static_cast<int>(std::max<long long>(1, std::min<long long>((n + kThreads - 1) / kThreads, 1 << 20))); }

struct Geometry {
  int batch, cin, cout, in_h, in_w, src_h, src_w, out_h, out_w, kh, kw, sh, sw, dh, dw, ph, pw, groups;
};

__global__ void gather_kernel(int batch, int h, int w, int channels, DeviceInputMap map, const float* __restrict__ x, float* __restrict__ out) {
  const long long total = static_cast<long long>(batch) * h * w * channels;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const NhwcIndex at = nhwc_index(i, h, w, channels);
    out[i] = x[((at.n * map.src_h + __ldg(map.rows + at.h)) * map.src_w + __ldg(map.cols + at.w)) * channels + at.c];
  }
}

// One output element per thread (output channel fastest): the taps inside the logical
// input, each reading the group's input channels at the mapped pixel, in tap then
// channel order; then bias, activation, residual.
__global__ void direct_kernel(Geometry g, DeviceInputMap map, const float* __restrict__ x, const float* __restrict__ w,
                              const float* __restrict__ bias, ActivationParams activation, const float* residual, float* y) {
  const long long total = static_cast<long long>(g.batch) * g.out_h * g.out_w * g.cout;
  const int cig = g.cin / g.groups, cog = g.cout / g.groups;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const NhwcIndex at = nhwc_index(i, g.out_h, g.out_w, g.cout);
    const int co = at.c, ow = at.w, oh = at.h;
    const long long n = at.n;
    const int first_channel = (co / cog) * cig;
    float acc = 0.f;
    for (int th = 0; th < g.kh; ++th) {
      const int ih = oh * g.sh - g.ph + th * g.dh;
      if (ih < 0 || ih >= g.in_h) continue;
      const int row = map.rows ? __ldg(map.rows + ih) : ih;
      for (int tw = 0; tw < g.kw; ++tw) {
        const int iw = ow * g.sw - g.pw + tw * g.dw;
        if (iw < 0 || iw >= g.in_w) continue;
        const int col = map.cols ? __ldg(map.cols + iw) : iw;
        const float* xp = x + ((n * g.src_h + row) * g.src_w + col) * g.cin + first_channel;
        // [kh][kw][Cin/groups][Cout]: this tap's rows, column co.
        const float* wp = w + (static_cast<long long>(th) * g.kw + tw) * cig * g.cout + co;
        for (int ci = 0; ci < cig; ++ci) acc = fmaf(__ldg(xp + ci), __ldg(wp + static_cast<long long>(ci) * g.cout), acc);
      }
    }
    if (bias) acc += __ldg(bias + co);
    float v = activate(acc, activation);
    if (residual) v += residual[i];
    y[i] = v;
  }
}

// Ungrouped convolutions of 1-4 input channels (an image-to-image network's first
// layer: 7x7 or 9x9 over RGB): on the implicit GEMM, whose 16-deep channel slices are
// then mostly padding, a 9x9x3 -> 32 layer ran at 2.4 TFLOP/s. Here a block stages one
// chunk of kFewChannelsChunk output channels of every tap's weights in shared memory
// (the threads of a warp read the same weight: a broadcast), and each thread keeps that
// chunk of one output pixel in registers.
constexpr int kFewChannelsChunk = 32;

__global__ void __launch_bounds__(kThreads) few_channels_kernel(Geometry g, DeviceInputMap map, const float* __restrict__ x,
                                                                const float* __restrict__ w, const float* __restrict__ bias,
                                                                ActivationParams activation, const float* residual, float* y) {
  extern __shared__ __align__(16) float staged[];  // [kh][kw][cin][kFewChannelsChunk]
  const int co0 = blockIdx.y * kFewChannelsChunk, count = min(kFewChannelsChunk, g.cout - co0);
  const int rows = g.kh * g.kw * g.cin;
  for (int i = threadIdx.x; i < rows * kFewChannelsChunk; i += blockDim.x) {
    const int r = i / kFewChannelsChunk, j = i % kFewChannelsChunk;
    staged[i] = j < count ? __ldg(w + static_cast<long long>(r) * g.cout + co0 + j) : 0.f;
  }
  __syncthreads();
  const long long pixels = static_cast<long long>(g.batch) * g.out_h * g.out_w;
  const long long p = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p >= pixels) return;
  const int ow = static_cast<int>(p % g.out_w);
  const int oh = static_cast<int>((p / g.out_w) % g.out_h);
  const long long n = p / (static_cast<long long>(g.out_w) * g.out_h);
  float acc[kFewChannelsChunk];
#pragma unroll
  for (int j = 0; j < kFewChannelsChunk; ++j) acc[j] = 0.f;
  for (int th = 0; th < g.kh; ++th) {
    const int ih = oh * g.sh - g.ph + th * g.dh;
    if (ih < 0 || ih >= g.in_h) continue;
    const int row = map.rows ? __ldg(map.rows + ih) : ih;
    for (int tw = 0; tw < g.kw; ++tw) {
      const int iw = ow * g.sw - g.pw + tw * g.dw;
      if (iw < 0 || iw >= g.in_w) continue;
      const int col = map.cols ? __ldg(map.cols + iw) : iw;
      const float* xp = x + ((n * g.src_h + row) * g.src_w + col) * g.cin;
      const float* wp = staged + (th * g.kw + tw) * g.cin * kFewChannelsChunk;
      for (int ci = 0; ci < g.cin; ++ci) {
        const float xv = __ldg(xp + ci);
        const float4* w4 = reinterpret_cast<const float4*>(wp + ci * kFewChannelsChunk);
#pragma unroll
        for (int j = 0; j < kFewChannelsChunk / 4; ++j) {
          const float4 v = w4[j];
          acc[4 * j] = fmaf(xv, v.x, acc[4 * j]);
          acc[4 * j + 1] = fmaf(xv, v.y, acc[4 * j + 1]);
          acc[4 * j + 2] = fmaf(xv, v.z, acc[4 * j + 2]);
          acc[4 * j + 3] = fmaf(xv, v.w, acc[4 * j + 3]);
        }
      }
    }
  }
  const long long out = p * g.cout + co0;
#pragma unroll
  for (int j = 0; j < kFewChannelsChunk; ++j) {
    if (j >= count) break;
    float v = activate(acc[j] + (bias ? __ldg(bias + co0 + j) : 0.f), activation);
    if (residual) v += residual[out + j];
    y[out + j] = v;
  }
}

size_t few_channels_staged_bytes(const kernels::ConvShape& s) {
  return static_cast<size_t>(s.h.kernel * s.w.kernel * s.in_channels) * kFewChannelsChunk * sizeof(float);
}

}  // namespace

void conv2d_input_map_gather(int batch, int h, int w, int channels, const DeviceInputMap& map, const float* x, float* out,
                             cudaStream_t stream) {
  const long long total = static_cast<long long>(batch) * h * w * channels;
  if (total <= 0) return;
  gather_kernel<<<blocks_for(total), kThreads, 0, stream>>>(batch, h, w, channels, map, x, out);
  check_cuda(cudaGetLastError(), "conv2d input map gather launch");
}

bool conv2d_few_channels(const kernels::ConvShape& s, int groups) {
  // Within the default 48 KB of shared memory (a 9x9x4 filter takes 41 KB), and a grid
  // whose x dimension the pixel count fits.
  return groups == 1 && s.in_channels <= 4 && few_channels_staged_bytes(s) <= 48 * 1024 &&
         s.batch * s.h.out * s.w.out < (1LL << 31) * kThreads;
}

void conv2d_direct(const kernels::ConvShape& s, int groups, const DeviceInputMap& map, const float* x, const float* weights, const float* bias,
                   ActivationParams activation, const float* residual, float* y, cudaStream_t stream) {
  Geometry g{static_cast<int>(s.batch), static_cast<int>(s.in_channels), static_cast<int>(s.out_channels), static_cast<int>(s.h.in),
             static_cast<int>(s.w.in), static_cast<int>(s.h.in), static_cast<int>(s.w.in), static_cast<int>(s.h.out), static_cast<int>(s.w.out),
             static_cast<int>(s.h.kernel), static_cast<int>(s.w.kernel), static_cast<int>(s.h.stride), static_cast<int>(s.w.stride),
             static_cast<int>(s.h.dilation), static_cast<int>(s.w.dilation), static_cast<int>(s.h.pad_begin), static_cast<int>(s.w.pad_begin),
             groups};
  if (map.rows) g.src_h = map.src_h, g.src_w = map.src_w;
  const long long total = static_cast<long long>(g.batch) * g.out_h * g.out_w * g.cout;
  if (total <= 0) return;
  if (conv2d_few_channels(s, groups)) {
    const long long pixels = total / g.cout;
    const dim3 grid(static_cast<unsigned>((pixels + kThreads - 1) / kThreads), static_cast<unsigned>((g.cout + kFewChannelsChunk - 1) / kFewChannelsChunk));
    few_channels_kernel<<<grid, kThreads, few_channels_staged_bytes(s), stream>>>(g, map, x, weights, bias, activation, residual, y);
    check_cuda(cudaGetLastError(), "conv2d few-channel launch");
    return;
  }
  direct_kernel<<<blocks_for(total), kThreads, 0, stream>>>(g, map, x, weights, bias, activation, residual, y);
  check_cuda(cudaGetLastError(), "conv2d direct launch");
}

}  // namespace edgegan::cuda
