#include <algorithm>

#include "kernels_cpu/conv2d.h"
#include "kernels_cpu/conv_transpose_geometry.h"  // floor_div
#include "kernels_cpu/gemm.h"

namespace edgegan::cpu {

void conv2d_trimmed(const ConvShape& s, const float* packed, const float* x, float* y,
                    const Epilogue& ep, int threads) {
  const int64_t cin = s.in_channels, cout = s.out_channels;
  const int64_t tasks = s.batch * s.h.out;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
  for (int64_t task = 0; task < tasks; ++task) {
    const int64_t n = task / s.h.out, oh = task % s.h.out;
    float* yrow = y + (n * s.h.out + oh) * s.w.out * cout;
    fill_bias(yrow, s.w.out, cout, cout, ep.bias);
    for (int64_t kh = 0; kh < s.h.kernel; ++kh) {
      const int64_t ih = oh * s.h.stride - s.h.pad_begin + kh * s.h.dilation;
      if (ih < 0 || ih >= s.h.in) continue;
      for (int64_t kw = 0; kw < s.w.kernel; ++kw) {
        // Output columns whose input column iw = ow*stride - pad + kw*dilation is inside [0, in).
        const int64_t shift = kw * s.w.dilation - s.w.pad_begin;
        const int64_t ow_lo = std::max<int64_t>(0, floor_div(-shift + s.w.stride - 1, s.w.stride));
        const int64_t ow_hi = std::min<int64_t>(s.w.out, floor_div(s.w.in - 1 - shift, s.w.stride) + 1);
        if (ow_hi <= ow_lo) continue;
        const float* a = x + ((n * s.h.in + ih) * s.w.in + ow_lo * s.w.stride + shift) * cin;
        const float* b = packed + (kh * s.w.kernel + kw) * cin * cout;
        gemm_accumulate(ow_hi - ow_lo, cout, cin, a, s.w.stride * cin, b, cout, yrow + ow_lo * cout, cout);
      }
    }
    apply_activation(yrow, s.w.out, cout, cout, ep.activation, ep.alpha);
  }
}

}  // namespace edgegan::cpu
