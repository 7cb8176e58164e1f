#include <algorithm>

#include "kernels_cpu/conv_transpose2d/conv_transpose2d_col2im.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"
#include "kernels_cpu/gemm/gemm.h"
#include "kernels_cpu/activation/activation.h"
#include "kernels_common/conv_geometry.h"

namespace edgegan::cpu {

int64_t conv_transpose2d_col2im_workspace(const ConvShape& s) {
  return saturating_product({s.batch, s.h.in, s.w.in, s.h.kernel, s.w.kernel, s.out_channels});
}

void conv_transpose2d_col2im(const ConvShape& s, const float* col_kernel, const float* x, float* y,
                             float* cols, const Epilogue& ep, int threads) {
  const int64_t cin = s.in_channels, cout = s.out_channels;
  const int64_t taps = s.h.kernel * s.w.kernel;
  const int64_t pixels = s.batch * s.h.in * s.w.in;
  const int64_t col_width = taps * cout;

  // Stage 1: cols[pixel][kh][kw][Cout] = x[pixel] · W, split over pixel blocks.
  const int64_t block = 16;
  const int64_t blocks = (pixels + block - 1) / block;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t p0 = b * block, m = std::min(block, pixels - p0);
    float* c = cols + p0 * col_width;
    std::fill(c, c + m * col_width, 0.f);
    gemm_accumulate(m, col_width, cin, x + p0 * cin, cin, col_kernel, col_width, c, col_width);
  }

  // Stage 2: col2im, written as a gather per output row so rows are independent.
  const int64_t tasks = s.batch * s.h.out;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
  for (int64_t task = 0; task < tasks; ++task) {
    const int64_t n = task / s.h.out, oh = task % s.h.out;
    float* yrow = y + (n * s.h.out + oh) * s.w.out * cout;
    fill_bias(yrow, s.w.out, cout, cout, ep.bias);
    for (int64_t kh = 0; kh < s.h.kernel; ++kh) {
      const int64_t num_h = oh + s.h.pad_begin - kh * s.h.dilation;
      if (num_h < 0 || num_h % s.h.stride != 0) continue;
      const int64_t ih = num_h / s.h.stride;
      if (ih >= s.h.in) continue;
      for (int64_t ow = 0; ow < s.w.out; ++ow) {
        float* dst = yrow + ow * cout;
        for (int64_t kw = 0; kw < s.w.kernel; ++kw) {
          const int64_t num_w = ow + s.w.pad_begin - kw * s.w.dilation;
          if (num_w < 0 || num_w % s.w.stride != 0) continue;
          const int64_t iw = num_w / s.w.stride;
          if (iw >= s.w.in) continue;
          const float* src = cols + ((n * s.h.in + ih) * s.w.in + iw) * col_width + (kh * s.w.kernel + kw) * cout;
          for (int64_t co = 0; co < cout; ++co) dst[co] += src[co];
        }
      }
    }
    apply_activation(yrow, s.w.out, cout, cout, ep.activation, ep.alpha, ep.beta, ep.slope);
  }
}

}  // namespace edgegan::cpu
