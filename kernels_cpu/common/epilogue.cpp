#include "kernels_cpu/common/epilogue.h"

#include <algorithm>

#include "kernels_cpu/activation/activation_functors.h"

namespace edgegan::cpu {

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
                         Activation activation, float alpha, float beta) {
  with_activation(activation, alpha, [&](auto f) { store_rows(acc, count, channels, rows, bias, f); }, beta);
}

void add_residual(float* y, int64_t count, int64_t channels, int64_t pixel_stride, const float* residual) {
  if (pixel_stride == channels) {
    const int64_t n = count * channels;
    for (int64_t i = 0; i < n; ++i) y[i] += residual[i];
    return;
  }
  for (int64_t p = 0; p < count; ++p) {
    float* row = y + p * pixel_stride;
    const float* r = residual + p * pixel_stride;
    for (int64_t c = 0; c < channels; ++c) row[c] += r[c];
  }
}

void finish_epilogue(float* y, int64_t first, int64_t count, int64_t channels, const Epilogue& ep) {
  finish_epilogue(y, first, count, channels, 0, channels, ep);
}

void finish_epilogue(float* y, int64_t first, int64_t count, int64_t channels, int64_t column, int64_t width, const Epilogue& ep) {
  apply_activation(y, count, width, channels, ep.activation, ep.alpha, ep.beta);
  if (ep.residual) add_residual(y, count, width, channels, ep.residual + first * channels + column);
}

void bias_backward(int64_t pixels, int64_t channels, const float* dy, float* db) {
  std::fill(db, db + channels, 0.f);
  for (int64_t p = 0; p < pixels; ++p)
    for (int64_t c = 0; c < channels; ++c) db[c] += dy[p * channels + c];
}

}  // namespace edgegan::cpu
