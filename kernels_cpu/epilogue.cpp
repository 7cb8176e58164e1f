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

namespace {

// One loop per activation, so the compiler sees a branch-free body it can vectorise
// (ReLU, LeakyReLU) instead of a switch per element.
template <Activation A>
void activate_rows(float* y, int64_t count, int64_t channels, int64_t pixel_stride, float alpha) {
  for (int64_t p = 0; p < count; ++p) {
    float* row = y + p * pixel_stride;
    for (int64_t c = 0; c < channels; ++c) row[c] = activate(row[c], A, alpha);
  }
}

}  // namespace

void apply_activation(float* y, int64_t count, int64_t channels, int64_t pixel_stride,
                      Activation activation, float alpha) {
  switch (activation) {
    case Activation::kNone: return;
    case Activation::kRelu: return activate_rows<Activation::kRelu>(y, count, channels, pixel_stride, alpha);
    case Activation::kLeakyRelu: return activate_rows<Activation::kLeakyRelu>(y, count, channels, pixel_stride, alpha);
    case Activation::kTanh: return activate_rows<Activation::kTanh>(y, count, channels, pixel_stride, alpha);
    case Activation::kSigmoid: return activate_rows<Activation::kSigmoid>(y, count, channels, pixel_stride, alpha);
  }
}

}  // namespace edgegan::cpu
