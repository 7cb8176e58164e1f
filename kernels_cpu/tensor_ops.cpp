#include "kernels_cpu/tensor_ops.h"

#include <algorithm>

namespace edgegan::cpu {

void embedding_lookup(int64_t count, const int64_t* indices, int64_t dim, const float* table, float* y) {
  for (int64_t k = 0; k < count; ++k) {
    const float* row = table + indices[k] * dim;
    std::copy(row, row + dim, y + k * dim);
  }
}

void concat(int64_t outer, const std::vector<const float*>& inputs, const std::vector<int64_t>& chunks,
            float* y) {
  for (int64_t o = 0; o < outer; ++o)
    for (size_t i = 0; i < inputs.size(); ++i) {
      const float* src = inputs[i] + o * chunks[i];
      y = std::copy(src, src + chunks[i], y);
    }
}

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

void channel_affine(int64_t pixels, int64_t channels, const float* scale, const float* shift,
                    const float* x, float* y, Activation activation, float alpha) {
  for (int64_t p = 0; p < pixels; ++p)
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t i = p * channels + c;
      y[i] = activate(x[i] * scale[c] + shift[c], activation, alpha);
    }
}

void elementwise_activation(int64_t count, const float* x, float* y, Activation activation, float alpha) {
  for (int64_t i = 0; i < count; ++i) y[i] = activate(x[i], activation, alpha);
}

}  // namespace edgegan::cpu
