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

// Calls body(f) with the activation as a branch-free functor, one instantiation per
// activation, so every loop over it vectorises (with -fno-trapping-math, LeakyReLU's
// v * alpha too; tanh through the rational function above).
template <typename Body>
void with_activation(Activation activation, float alpha, Body body) {
  switch (activation) {
    case Activation::kNone: return body([](float v) { return v; });
    case Activation::kRelu: return body([](float v) { return v > 0.f ? v : 0.f; });
    case Activation::kLeakyRelu: return body([alpha](float v) { return v > 0.f ? v : v * alpha; });
    case Activation::kTanh: return body(tanh_rational);
    case Activation::kSigmoid: return body([](float v) { return 0.5f + 0.5f * tanh_rational(0.5f * v); });  // (1 + tanh(v/2)) / 2
  }
}

// Applies `f` to every value of `count` pixels `pixel_stride` apart: one long loop
// where the pixels are contiguous, one per pixel otherwise.
template <typename F>
void map_pixels(float* y, int64_t count, int64_t channels, int64_t pixel_stride, F f) {
  if (pixel_stride == channels) {
    for (int64_t i = 0; i < count * channels; ++i) y[i] = f(y[i]);
    return;
  }
  for (int64_t p = 0; p < count; ++p)
    for (int64_t c = 0; c < channels; ++c) y[p * pixel_stride + c] = f(y[p * pixel_stride + c]);
}

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

// The RGB heads' pixels have 1-4 channels: std::copy of 3 floats per pixel would be a
// memmove call each, so those widths are unrolled.
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

void store_with_epilogue(const float* acc, int64_t count, int64_t channels, float* const* rows, const float* bias,
                         Activation activation, float alpha) {
  with_activation(activation, alpha, [&](auto f) { store_rows(acc, count, channels, rows, bias, f); });
}

void apply_activation(float* y, int64_t count, int64_t channels, int64_t pixel_stride,
                      Activation activation, float alpha) {
  if (activation == Activation::kNone) return;
  with_activation(activation, alpha, [&](auto f) { map_pixels(y, count, channels, pixel_stride, f); });
}

}  // namespace edgegan::cpu
