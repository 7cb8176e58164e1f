#include "kernels_cuda/sliding_channel_conv/sliding_channel_conv.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "kernels_cuda/common/activation.cuh"
#include "kernels_cuda/common/cuda_check.h"
#include "kernels_cuda/common/nhwc.cuh"

namespace edgegan::cuda {
namespace {

constexpr int kThreads = 256;

struct Geometry {
  int batch, cin, cout, in_h, in_w, out_h, out_w, kh, kw, sh, sw, dh, dw, ph, pw, window, period;
};

__global__ void sliding_channel_kernel(Geometry g, const int* __restrict__ starts, const float* __restrict__ w, const float* __restrict__ bias,
                                       ActivationParams activation, const float* __restrict__ x, float* __restrict__ y) {
  const long long total = static_cast<long long>(g.batch) * g.out_h * g.out_w * g.cout;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const NhwcIndex at = nhwc_index(i, g.out_h, g.out_w, g.cout);
    const int o = at.c, ow = at.w, oh = at.h;
    const long long n = at.n;
    const int start = __ldg(starts + o % g.period);
    float acc = 0.f;
    for (int th = 0; th < g.kh; ++th) {
      const int ih = oh * g.sh - g.ph + th * g.dh;
      if (ih < 0 || ih >= g.in_h) continue;
      for (int tw = 0; tw < g.kw; ++tw) {
        const int iw = ow * g.sw - g.pw + tw * g.dw;
        if (iw < 0 || iw >= g.in_w) continue;
        const float* xp = x + ((n * g.in_h + ih) * g.in_w + iw) * g.cin;
        const float* wp = w + ((static_cast<long long>(o) * g.kh + th) * g.kw + tw) * g.window;
        // start < Cin and window <= Cin: the window wraps at most once.
        int c = start;
        for (int j = 0; j < g.window; ++j) {
          acc = fmaf(__ldg(wp + j), __ldg(xp + c), acc);
          if (++c == g.cin) c = 0;
        }
      }
    }
    if (bias) acc += __ldg(bias + o);
    y[i] = activate(acc, activation);
  }
}

}  // namespace

void sliding_channel_conv(const kernels::ConvShape& s, int window, int period, const int* starts, const float* weights, const float* bias,
                          ActivationParams activation, const float* x, float* y, cudaStream_t stream) {
  const Geometry g{static_cast<int>(s.batch), static_cast<int>(s.in_channels), static_cast<int>(s.out_channels), static_cast<int>(s.h.in),
                   static_cast<int>(s.w.in), static_cast<int>(s.h.out), static_cast<int>(s.w.out), static_cast<int>(s.h.kernel),
                   static_cast<int>(s.w.kernel), static_cast<int>(s.h.stride), static_cast<int>(s.w.stride), static_cast<int>(s.h.dilation),
                   static_cast<int>(s.w.dilation), static_cast<int>(s.h.pad_begin), static_cast<int>(s.w.pad_begin), window, period};
  const long long total = static_cast<long long>(g.batch) * g.out_h * g.out_w * g.cout;
  if (total <= 0) return;
  const int blocks = static_cast<int>(std::min<long long>((total + kThreads - 1) / kThreads, 1 << 20));
  sliding_channel_kernel<<<blocks, kThreads, 0, stream>>>(g, starts, weights, bias, activation, x, y);
  check_cuda(cudaGetLastError(), "sliding channel conv launch");
}

}  // namespace edgegan::cuda
