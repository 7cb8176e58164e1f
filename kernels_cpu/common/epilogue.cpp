#include "kernels_cpu/common/epilogue.h"

#include <algorithm>

#include "kernels_cpu/activation/activation_functors.h"
#include "kernels_cpu/activation/activation_run.h"
#include "kernels_cpu/common/simd_clones.h"

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

// store_rows with a slope per channel (kPRelu): the product selected, as apply_activation's
// PRelu (a vector blend in every clone, the same bits).
EDGEGAN_SIMD_CLONES void store_rows_prelu(const float* acc, int64_t count, int64_t channels, float* const* rows, const float* bias,
                                          const float* slope) {
  for (int64_t p = 0; p < count; ++p) {
    const float* a = acc + p * channels;
    float* y = rows[p];
EDGEGAN_NO_ALIAS_LOOP
    for (int64_t c = 0; c < channels; ++c) {
      y[c] = prelu_select(bias ? a[c] + bias[c] : a[c], slope[c]);
    }
  }
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
                         Activation activation, float alpha, float beta, const float* slope) {
  if (activation == Activation::kPRelu && slope) return store_rows_prelu(acc, count, channels, rows, bias, slope);
  if (wide_activation_run(activation)) {  // apply_activation's bits: the sums stored, then activated in place
    store_rows(acc, count, channels, rows, bias, [](float v) { return v; });
    for (int64_t p = 0; p < count; ++p) apply_activation(rows[p], 1, channels, channels, activation, alpha, beta);
    return;
  }
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
  apply_activation(y, count, width, channels, ep.activation, ep.alpha, ep.beta, ep.slope ? ep.slope + column : nullptr);
  if (ep.residual) add_residual(y, count, width, channels, ep.residual + first * channels + column);
}

void prelu_backward_from_output(int64_t pixels, int64_t channels, const float* slope, const float* y, float* grad, float* dslope) {
  if (dslope)
    for (int64_t p = 0; p < pixels; ++p)
      for (int64_t c = 0; c < channels; ++c) {
        const int64_t i = p * channels + c;
        if (y[i] <= 0.f) dslope[c] += grad[i] * (y[i] / slope[c]);
      }
  for (int64_t p = 0; p < pixels; ++p)
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t i = p * channels + c;
      grad[i] = y[i] > 0.f ? grad[i] : grad[i] * slope[c];
    }
}

void epilogue_activation_backward(int64_t pixels, int64_t channels, const float* y, float* grad, const Epilogue& ep, float* dslope) {
  if (ep.activation == Activation::kPRelu && ep.slope) return prelu_backward_from_output(pixels, channels, ep.slope, y, grad, dslope);
  activation_backward(pixels * channels, y, grad, ep.activation, ep.alpha, ep.beta);
}

void bias_backward(int64_t pixels, int64_t channels, const float* dy, float* db) {
  std::fill(db, db + channels, 0.f);
  for (int64_t p = 0; p < pixels; ++p)
    for (int64_t c = 0; c < channels; ++c) db[c] += dy[p * channels + c];
}

}  // namespace edgegan::cpu
