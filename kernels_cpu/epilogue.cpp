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

// tanh as a [13/6] minimax rational function of x (the approximation Eigen uses for
// float): branch-free, so a loop of it vectorises, where std::tanh is a libm call per
// element (the RGB head's 12288 outputs per 64x64 image took longer than its GEMM).
// Max error against tanh: 3.7e-7 absolute (6 ulps near 1), 1e-6 relative (tested);
// exactly +-1 beyond |x| = 9, where float tanh is.
inline float tanh_rational(float x) {
  const float c = std::min(7.90531110763549805f, std::max(-7.90531110763549805f, x));
  const float x2 = c * c;
  float p = -2.76076847742355e-16f;
  p = p * x2 + 2.00018790482477e-13f;
  p = p * x2 - 8.60467152213735e-11f;
  p = p * x2 + 5.12229709037114e-08f;
  p = p * x2 + 1.48572235717979e-05f;
  p = p * x2 + 6.37261928875436e-04f;
  p = p * x2 + 4.89352455891786e-03f;
  float q = 1.19825839466702e-06f;
  q = q * x2 + 1.18534705686654e-04f;
  q = q * x2 + 2.26843463243900e-03f;
  q = q * x2 + 4.89352518554385e-03f;
  const float r = c * p / q;
  return std::abs(x) < 9.f ? r : (x > 0.f ? 1.f : -1.f);  // tanh(9) rounds to 1 in float
}

// Applies `f` to every value of `count` pixels `pixel_stride` apart. Rows of a few
// channels (the heads: 3 values per pixel, pixels of one phase two apart) are gathered
// into a contiguous block first, so `f` still runs over a long vectorisable loop.
template <typename F>
void map_pixels(float* y, int64_t count, int64_t channels, int64_t pixel_stride, F f) {
  constexpr int64_t kBlock = 256;
  if (pixel_stride == channels) {  // contiguous: one pass
    for (int64_t i = 0; i < count * channels; ++i) y[i] = f(y[i]);
    return;
  }
  if (channels >= 16) {
    for (int64_t p = 0; p < count; ++p)
      for (int64_t c = 0; c < channels; ++c) y[p * pixel_stride + c] = f(y[p * pixel_stride + c]);
    return;
  }
  float block[kBlock];
  const int64_t per_block = kBlock / channels;
  for (int64_t p0 = 0; p0 < count; p0 += per_block) {
    const int64_t pixels = std::min(per_block, count - p0), n = pixels * channels;
    for (int64_t p = 0; p < pixels; ++p) std::copy(y + (p0 + p) * pixel_stride, y + (p0 + p) * pixel_stride + channels, block + p * channels);
    for (int64_t i = 0; i < n; ++i) block[i] = f(block[i]);
    for (int64_t p = 0; p < pixels; ++p) std::copy(block + p * channels, block + (p + 1) * channels, y + (p0 + p) * pixel_stride);
  }
}

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

float fast_tanh(float x) { return tanh_rational(x); }

void apply_activation(float* y, int64_t count, int64_t channels, int64_t pixel_stride,
                      Activation activation, float alpha) {
  switch (activation) {
    case Activation::kNone: return;
    case Activation::kRelu: return activate_rows<Activation::kRelu>(y, count, channels, pixel_stride, alpha);
    case Activation::kLeakyRelu: return activate_rows<Activation::kLeakyRelu>(y, count, channels, pixel_stride, alpha);
    case Activation::kTanh: return map_pixels(y, count, channels, pixel_stride, tanh_rational);
    // sigmoid(v) = (1 + tanh(v / 2)) / 2
    case Activation::kSigmoid: return map_pixels(y, count, channels, pixel_stride, [](float v) { return 0.5f + 0.5f * tanh_rational(0.5f * v); });
  }
}

}  // namespace edgegan::cpu
