#include "kernels_cpu/conv_transpose2d/conv_transpose2d_reference.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"

namespace edgegan::cpu {

void conv_transpose2d_reference(const ConvShape& s, const float* x, const float* w, float* y,
                                const Epilogue& ep) {
  const int64_t cin = s.in_channels, cout = s.out_channels;
  const int64_t oh_n = s.h.out, ow_n = s.w.out;
  for (int64_t n = 0; n < s.batch; ++n) {
    float* yn = y + n * oh_n * ow_n * cout;
    for (int64_t p = 0; p < oh_n * ow_n; ++p)
      for (int64_t co = 0; co < cout; ++co) yn[p * cout + co] = ep.bias ? ep.bias[co] : 0.f;
    for (int64_t ih = 0; ih < s.h.in; ++ih)
      for (int64_t iw = 0; iw < s.w.in; ++iw)
        for (int64_t kh = 0; kh < s.h.kernel; ++kh)
          for (int64_t kw = 0; kw < s.w.kernel; ++kw) {
            const int64_t oh = ih * s.h.stride - s.h.pad_begin + kh * s.h.dilation;
            const int64_t ow = iw * s.w.stride - s.w.pad_begin + kw * s.w.dilation;
            if (oh < 0 || oh >= oh_n || ow < 0 || ow >= ow_n) continue;
            for (int64_t ci = 0; ci < cin; ++ci) {
              const float xv = x[((n * s.h.in + ih) * s.w.in + iw) * cin + ci];
              for (int64_t co = 0; co < cout; ++co)
                yn[(oh * ow_n + ow) * cout + co] +=
                    xv * w[((ci * cout + co) * s.h.kernel + kh) * s.w.kernel + kw];
            }
          }
    for (int64_t i = 0; i < oh_n * ow_n * cout; ++i) yn[i] = activate(yn[i], ep.activation, ep.alpha, ep.beta);
  }
}

}  // namespace edgegan::cpu
