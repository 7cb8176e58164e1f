#include "kernels_cpu/conv2d_backward.h"

#include <algorithm>

#include "kernels_cpu/conv_transpose.h"
#include "kernels_cpu/conv_transpose_backward.h"
#include "kernels_cpu/gemm.h"

namespace edgegan::cpu {

void conv2d_backward_reference(const ConvShape& s, const float* x, const float* w, const float* dy, float* dx, float* dw, float* db) {
  const int64_t cin = s.in_channels, cout = s.out_channels;
  if (dx) std::fill(dx, dx + s.batch * s.h.in * s.w.in * cin, 0.f);
  if (dw) std::fill(dw, dw + cout * cin * s.h.kernel * s.w.kernel, 0.f);
  if (db) bias_backward(s.batch * s.h.out * s.w.out, cout, dy, db);
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t oh = 0; oh < s.h.out; ++oh)
      for (int64_t ow = 0; ow < s.w.out; ++ow)
        for (int64_t kh = 0; kh < s.h.kernel; ++kh)
          for (int64_t kw = 0; kw < s.w.kernel; ++kw) {
            const int64_t ih = oh * s.h.stride - s.h.pad_begin + kh * s.h.dilation;
            const int64_t iw = ow * s.w.stride - s.w.pad_begin + kw * s.w.dilation;
            if (ih < 0 || ih >= s.h.in || iw < 0 || iw >= s.w.in) continue;
            const float* g = dy + ((n * s.h.out + oh) * s.w.out + ow) * cout;
            for (int64_t co = 0; co < cout; ++co)
              for (int64_t ci = 0; ci < cin; ++ci) {
                const int64_t wi = ((co * cin + ci) * s.h.kernel + kh) * s.w.kernel + kw;
                const int64_t xi = ((n * s.h.in + ih) * s.w.in + iw) * cin + ci;
                if (dx) dx[xi] += g[co] * w[wi];
                if (dw) dw[wi] += x[xi] * g[co];
              }
          }
}

ConvInputGradient make_conv2d_input_gradient(const ConvShape& s, const float* packed) {
  ConvInputGradient g;
  g.shape.batch = s.batch;
  g.shape.in_channels = s.out_channels;  // the transposed conv reads dY ...
  g.shape.out_channels = s.in_channels;  // ... and writes dX
  auto axis = [](const ConvAxis& a) {
    DeconvAxis d{a.out, a.kernel, a.stride, a.dilation, a.pad_begin, 0, a.in};
    // Whatever pad_end makes the output length the conv's input length (it may be
    // negative: rows the conv never read get zero gradient).
    d.pad_end = (a.out - 1) * a.stride - a.pad_begin + a.dilation * (a.kernel - 1) + 1 - a.in;
    return d;
  };
  g.shape.h = axis(s.h);
  g.shape.w = axis(s.w);
  // Transposed-conv ONNX layout [C_in = Cout][C_out = Cin][kh][kw] from the conv's [kh][kw][Cin][Cout]: no flip.
  const int64_t cin = s.in_channels, cout = s.out_channels, taps = s.h.kernel * s.w.kernel;
  std::vector<float> onnx(static_cast<size_t>(taps * cin * cout));
  for (int64_t t = 0; t < taps; ++t)
    for (int64_t ci = 0; ci < cin; ++ci)
      for (int64_t co = 0; co < cout; ++co) onnx[static_cast<size_t>((co * cin + ci) * taps + t)] = packed[(t * cin + ci) * cout + co];
  g.split.phases_h = split_deconv_axis(g.shape.h);
  g.split.phases_w = split_deconv_axis(g.shape.w);
  g.sub_kernels = pack_split_deconv_weights(g.shape, g.split.phases_h, g.split.phases_w, onnx.data());
  for (const auto& sub : g.sub_kernels) g.split.sub_kernels.push_back(sub.empty() ? nullptr : sub.data());
  return g;
}

void conv2d_backward_input(const ConvInputGradient& plan, const float* dy, float* dx, int threads) {
  conv_transpose2d_split(plan.shape, plan.split, dy, dx, Epilogue{}, threads);
}

void conv2d_backward_weights(const ConvShape& s, const float* x, const float* dy, float* dw, int threads) {
  const int64_t cin = s.in_channels, cout = s.out_channels, taps = s.h.kernel * s.w.kernel;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
  for (int64_t t = 0; t < taps; ++t) {
    const int64_t kh = t / s.w.kernel, kw = t % s.w.kernel;
    float* grad = dw + t * cin * cout;
    std::fill(grad, grad + cin * cout, 0.f);
    // Output columns whose input column ow*stride + shift is inside [0, in).
    const int64_t shift = kw * s.w.dilation - s.w.pad_begin;
    const int64_t ow_lo = std::max<int64_t>(0, floor_div(-shift + s.w.stride - 1, s.w.stride));
    const int64_t ow_hi = std::min<int64_t>(s.w.out, floor_div(s.w.in - 1 - shift, s.w.stride) + 1);
    if (ow_hi <= ow_lo) continue;
    for (int64_t n = 0; n < s.batch; ++n)
      for (int64_t oh = 0; oh < s.h.out; ++oh) {
        const int64_t ih = oh * s.h.stride - s.h.pad_begin + kh * s.h.dilation;
        if (ih < 0 || ih >= s.h.in) continue;
        const float* xr = x + ((n * s.h.in + ih) * s.w.in + ow_lo * s.w.stride + shift) * cin;  // leaping: stride*Cin apart
        const float* g = dy + ((n * s.h.out + oh) * s.w.out + ow_lo) * cout;
        gemm_accumulate_at(cin, cout, ow_hi - ow_lo, xr, s.w.stride * cin, g, cout, grad, cout);
      }
  }
}

}  // namespace edgegan::cpu
