#include "kernels_cpu/activation/activation.h"

#include "kernels_cpu/activation/activation_functors.h"

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

}  // namespace

float fast_tanh(float x) { return tanh_rational(x); }

void apply_activation(float* y, int64_t count, int64_t channels, int64_t pixel_stride,
                      Activation activation, float alpha) {
  if (activation == Activation::kNone) return;
  with_activation(activation, alpha, [&](auto f) { map_pixels(y, count, channels, pixel_stride, f); });
}

void activation_backward(int64_t count, const float* y, float* grad, Activation a, float alpha) {
  // One branch-free loop per activation (vectorised), not a switch per element.
  switch (a) {
    case Activation::kRelu:
      for (int64_t i = 0; i < count; ++i) grad[i] = y[i] > 0.f ? grad[i] : 0.f;
      break;
    case Activation::kLeakyRelu:  // alpha > 0: sign(y) = sign(x)
      for (int64_t i = 0; i < count; ++i) grad[i] = y[i] > 0.f ? grad[i] : grad[i] * alpha;
      break;
    case Activation::kTanh:
      for (int64_t i = 0; i < count; ++i) grad[i] *= 1.f - y[i] * y[i];
      break;
    case Activation::kSigmoid:
      for (int64_t i = 0; i < count; ++i) grad[i] *= y[i] * (1.f - y[i]);
      break;
    case Activation::kNone: break;
  }
}

}  // namespace edgegan::cpu
