#include "kernels_cpu/modulated_conv/modulated_conv.h"

#include <cmath>

namespace edgegan::cpu {

void modulated_conv_squared_sums(int64_t taps, int64_t in_channels, int64_t out_channels, const float* weights, float* wsq) {
  for (int64_t k = 0; k < out_channels * in_channels; ++k) wsq[k] = 0.f;
  // Tap by tap, so the sum's order is fixed whatever the shape (bit-identical runs).
  for (int64_t t = 0; t < taps; ++t)
    for (int64_t i = 0; i < in_channels; ++i) {
      const float* w = weights + (t * in_channels + i) * out_channels;
      for (int64_t o = 0; o < out_channels; ++o) wsq[o * in_channels + i] += w[o] * w[o];
    }
}

void modulated_conv_demodulation(int64_t batch, int64_t in_channels, int64_t out_channels, const float* style,
                                 const float* wsq, float epsilon, float* coefficients) {
  for (int64_t n = 0; n < batch; ++n) {
    const float* s = style + n * in_channels;
    for (int64_t o = 0; o < out_channels; ++o) {
      const float* w = wsq + o * in_channels;
      float sum = 0.f;
      for (int64_t i = 0; i < in_channels; ++i) sum += s[i] * s[i] * w[i];
      coefficients[n * out_channels + o] = 1.f / std::sqrt(sum + epsilon);
    }
  }
}

void modulated_conv_scale_input(int64_t batch, int64_t pixels, int64_t channels, const float* style, const float* x, float* y) {
  for (int64_t n = 0; n < batch; ++n) {
    const float* s = style + n * channels;
    for (int64_t p = 0; p < pixels; ++p) {
      const float* xp = x + (n * pixels + p) * channels;
      float* yp = y + (n * pixels + p) * channels;
      for (int64_t c = 0; c < channels; ++c) yp[c] = xp[c] * s[c];
    }
  }
}

void modulated_conv_finish_output(int64_t batch, int64_t pixels, int64_t channels, const float* coefficients,
                                  const float* bias, float* y, Activation activation, float alpha, float beta) {
  for (int64_t n = 0; n < batch; ++n) {
    const float* d = coefficients ? coefficients + n * channels : nullptr;
    float* yn = y + n * pixels * channels;
    for (int64_t p = 0; p < pixels; ++p) {
      float* yp = yn + p * channels;
      if (d)
        for (int64_t c = 0; c < channels; ++c) yp[c] *= d[c];
      if (bias)
        for (int64_t c = 0; c < channels; ++c) yp[c] += bias[c];
    }
    // The vectorised activations (fast_tanh for Tanh and Sigmoid), as every fused epilogue.
    if (activation != Activation::kNone) apply_activation(yn, pixels, channels, channels, activation, alpha, beta);
  }
}

}  // namespace edgegan::cpu
