#include "kernels_cpu/conv2d/conv2d_reference.h"

namespace edgegan::cpu {

void conv2d_reference(const ConvShape& s, const float* x, const float* w, float* y, const Epilogue& ep) {
  const int64_t cin = s.in_channels, cout = s.out_channels;
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t oh = 0; oh < s.h.out; ++oh)
      for (int64_t ow = 0; ow < s.w.out; ++ow)
        for (int64_t co = 0; co < cout; ++co) {
          float acc = ep.bias ? ep.bias[co] : 0.f;
          for (int64_t kh = 0; kh < s.h.kernel; ++kh)
            for (int64_t kw = 0; kw < s.w.kernel; ++kw) {
              const int64_t ih = oh * s.h.stride - s.h.pad_begin + kh * s.h.dilation;
              const int64_t iw = ow * s.w.stride - s.w.pad_begin + kw * s.w.dilation;
              if (ih < 0 || ih >= s.h.in || iw < 0 || iw >= s.w.in) continue;
              for (int64_t ci = 0; ci < cin; ++ci)
                acc += x[((n * s.h.in + ih) * s.w.in + iw) * cin + ci] *
                       w[((co * cin + ci) * s.h.kernel + kh) * s.w.kernel + kw];
            }
          y[((n * s.h.out + oh) * s.w.out + ow) * cout + co] = activate(acc, ep.activation, ep.alpha, ep.beta);
        }
}

void pack_conv2d_weights(const ConvShape& s, const float* w, float* packed) {
  const int64_t cin = s.in_channels, cout = s.out_channels;
  for (int64_t kh = 0; kh < s.h.kernel; ++kh)
    for (int64_t kw = 0; kw < s.w.kernel; ++kw)
      for (int64_t ci = 0; ci < cin; ++ci)
        for (int64_t co = 0; co < cout; ++co)
          packed[((kh * s.w.kernel + kw) * cin + ci) * cout + co] =
              w[((co * cin + ci) * s.h.kernel + kh) * s.w.kernel + kw];
}

}  // namespace edgegan::cpu
