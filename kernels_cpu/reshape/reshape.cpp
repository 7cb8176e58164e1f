#include "kernels_cpu/reshape/reshape.h"

namespace edgegan::cpu {

void nchw_to_nhwc(int64_t n, int64_t c, int64_t h, int64_t w, const float* x, float* y) {
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < h * w; ++p) y[(b * h * w + p) * c + ch] = x[(b * c + ch) * h * w + p];
}

void nhwc_to_nchw(int64_t n, int64_t c, int64_t h, int64_t w, const float* x, float* y) {
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < h * w; ++p) y[(b * c + ch) * h * w + p] = x[(b * h * w + p) * c + ch];
}

}  // namespace edgegan::cpu
