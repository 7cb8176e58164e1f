#include "kernels_cpu/epilogue.h"

#include <algorithm>

namespace edgegan::cpu {

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

// The heads have 1-4 channels per pixel, and a phase's pixels lie two apart: loops
// over such rows would run 3 iterations each (and std::fill / std::copy of 3 floats
// become memset / memmove calls). These fixed-width forms unroll the channels instead.

template <int C, typename F>
void map_fixed(float* y, int64_t count, int64_t pixel_stride, F f) {
  for (int64_t p = 0; p < count; ++p) {
    float* row = y + p * pixel_stride;
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) row[c] = f(row[c]);
  }
}

// Applies `f` to every value of `count` pixels `pixel_stride` apart.
template <typename F>
void map_pixels(float* y, int64_t count, int64_t channels, int64_t pixel_stride, F f) {
  if (pixel_stride == channels) {  // contiguous: one long loop
    for (int64_t i = 0; i < count * channels; ++i) y[i] = f(y[i]);
    return;
  }
  switch (channels) {
    case 1: return map_fixed<1>(y, count, pixel_stride, f);
    case 2: return map_fixed<2>(y, count, pixel_stride, f);
    case 3: return map_fixed<3>(y, count, pixel_stride, f);
    case 4: return map_fixed<4>(y, count, pixel_stride, f);
    default:
      for (int64_t p = 0; p < count; ++p)
        for (int64_t c = 0; c < channels; ++c) y[p * pixel_stride + c] = f(y[p * pixel_stride + c]);
  }
}

// As map_pixels, for a costly `f` (tanh): pixels of a few channels are gathered into a
// contiguous block first, so `f` runs as one vectorised loop rather than per pixel.
template <int C, typename F>
void map_gathered(float* y, int64_t count, int64_t pixel_stride, F f) {
  constexpr int64_t kPixels = 64;
  float block[kPixels * C];
  for (int64_t p0 = 0; p0 < count; p0 += kPixels) {
    const int64_t pixels = std::min(kPixels, count - p0);
    float* base = y + p0 * pixel_stride;
    for (int64_t p = 0; p < pixels; ++p)
      for (int c = 0; c < C; ++c) block[p * C + c] = base[p * pixel_stride + c];
    for (int64_t i = 0; i < pixels * C; ++i) block[i] = f(block[i]);
    for (int64_t p = 0; p < pixels; ++p)
      for (int c = 0; c < C; ++c) base[p * pixel_stride + c] = block[p * C + c];
  }
}

template <typename F>
void map_pixels_costly(float* y, int64_t count, int64_t channels, int64_t pixel_stride, F f) {
  if (pixel_stride == channels) return map_pixels(y, count, channels, pixel_stride, f);
  switch (channels) {
    case 1: return map_gathered<1>(y, count, pixel_stride, f);
    case 2: return map_gathered<2>(y, count, pixel_stride, f);
    case 3: return map_gathered<3>(y, count, pixel_stride, f);
    case 4: return map_gathered<4>(y, count, pixel_stride, f);
    default: return map_pixels(y, count, channels, pixel_stride, f);  // rows long enough to vectorise
  }
}

template <int C>
void fill_fixed(float* y, int64_t count, int64_t pixel_stride, const float* bias) {
  float v[C];
  for (int c = 0; c < C; ++c) v[c] = bias ? bias[c] : 0.f;
  for (int64_t p = 0; p < count; ++p)
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) y[p * pixel_stride + c] = v[c];
}

}  // namespace

float fast_tanh(float x) { return tanh_rational(x); }

void fill_bias(float* y, int64_t count, int64_t channels, int64_t pixel_stride, const float* bias) {
  switch (channels) {
    case 1: return fill_fixed<1>(y, count, pixel_stride, bias);
    case 2: return fill_fixed<2>(y, count, pixel_stride, bias);
    case 3: return fill_fixed<3>(y, count, pixel_stride, bias);
    case 4: return fill_fixed<4>(y, count, pixel_stride, bias);
    default:
      for (int64_t p = 0; p < count; ++p) {
        float* row = y + p * pixel_stride;
        if (bias) std::copy(bias, bias + channels, row);
        else std::fill(row, row + channels, 0.f);
      }
  }
}

namespace {

template <typename F>
void store_rows(const float* acc, int64_t count, int64_t channels, float* const* rows, const float* bias, F f) {
  for (int64_t p = 0; p < count; ++p) {
    const float* a = acc + p * channels;
    float* y = rows[p];
    if (bias) {
      for (int64_t c = 0; c < channels; ++c) y[c] = f(a[c] + bias[c]);
    } else {
      for (int64_t c = 0; c < channels; ++c) y[c] = f(a[c]);
    }
  }
}

}  // namespace

void store_with_epilogue(const float* acc, int64_t count, int64_t channels, float* const* rows, const float* bias,
                         Activation activation, float alpha) {
  switch (activation) {
    case Activation::kNone: return store_rows(acc, count, channels, rows, bias, [](float v) { return v; });
    case Activation::kRelu: return store_rows(acc, count, channels, rows, bias, [](float v) { return v > 0.f ? v : 0.f; });
    case Activation::kLeakyRelu:
      return store_rows(acc, count, channels, rows, bias, [alpha](float v) { return v > 0.f ? v : v * alpha; });
    case Activation::kTanh: return store_rows(acc, count, channels, rows, bias, tanh_rational);
    case Activation::kSigmoid:
      return store_rows(acc, count, channels, rows, bias, [](float v) { return 0.5f + 0.5f * tanh_rational(0.5f * v); });
  }
}

void apply_activation(float* y, int64_t count, int64_t channels, int64_t pixel_stride,
                      Activation activation, float alpha) {
  // One instantiation per activation, so each loop body is branch-free and vectorises
  // (with -fno-trapping-math, LeakyReLU's v * alpha too).
  switch (activation) {
    case Activation::kNone: return;
    case Activation::kRelu: return map_pixels(y, count, channels, pixel_stride, [](float v) { return v > 0.f ? v : 0.f; });
    case Activation::kLeakyRelu:
      return map_pixels(y, count, channels, pixel_stride, [alpha](float v) { return v > 0.f ? v : v * alpha; });
    case Activation::kTanh: return map_pixels_costly(y, count, channels, pixel_stride, tanh_rational);
    // sigmoid(v) = (1 + tanh(v / 2)) / 2
    case Activation::kSigmoid:
      return map_pixels_costly(y, count, channels, pixel_stride, [](float v) { return 0.5f + 0.5f * tanh_rational(0.5f * v); });
  }
}

}  // namespace edgegan::cpu
