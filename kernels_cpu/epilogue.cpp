#include "kernels_cpu/epilogue.h"

#include <algorithm>

namespace edgegan::cpu {

void fill_bias(float* y, int64_t count, int64_t channels, int64_t pixel_stride, const float* bias) {
  for (int64_t p = 0; p < count; ++p) {
    float* row = y + p * pixel_stride;
    if (bias) {
      std::copy(bias, bias + channels, row);
    } else {
      std::fill(row, row + channels, 0.f);
    }
  }
}

void apply_activation(float* y, int64_t count, int64_t channels, int64_t pixel_stride,
                      Activation activation, float alpha) {
  if (activation == Activation::kNone) return;
  for (int64_t p = 0; p < count; ++p) {
    float* row = y + p * pixel_stride;
    for (int64_t c = 0; c < channels; ++c) row[c] = activate(row[c], activation, alpha);
  }
}

}  // namespace edgegan::cpu
