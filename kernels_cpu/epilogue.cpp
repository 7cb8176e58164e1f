#include "kernels_cpu/epilogue.h"

#include <algorithm>

#include "kernels_cpu/activation_functors.h"

namespace edgegan::cpu {

namespace {

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
