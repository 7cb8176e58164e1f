#include "kernels_cpu/activation/activation.h"

#include "kernels_cpu/activation/activation_functors.h"
#include "kernels_cpu/activation/activation_run.h"
#include "kernels_cpu/common/cpu_isa.h"
#include "kernels_cpu/common/simd_clones.h"

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

// PRelu with a slope per channel over each pixel's channels. The product is computed for
// every value and then selected (a vector blend; written with the product inside the
// branch GCC keeps it scalar, as kernels_cpu/prelu found); exact, so every clone gives the
// same bits.
// Contiguous pixels of few channels (FSRCNN's 12) go as runs of `per_run` pixels against
// the slopes repeated that often, so the vector loop is not a 12-wide remainder per pixel.
EDGEGAN_SIMD_CLONES void prelu_pixels(float* y, int64_t count, int64_t channels, int64_t pixel_stride, const float* slope) {
  constexpr int64_t kRun = 256;
  int64_t p = 0;
  // Only where at least one whole run fits: the Winograd epilogues call this per pixel,
  // and building the repeated slopes per call made their PRelu layers 3.5x slower.
  if (pixel_stride == channels && channels <= kRun / 4 && count >= kRun / channels) {
    const int64_t per_run = kRun / channels, n = per_run * channels;
    float repeated[kRun];
    for (int64_t i = 0; i < n; ++i) repeated[i] = slope[i % channels];
    for (; p + per_run <= count; p += per_run) {
      float* run = y + p * channels;
EDGEGAN_NO_ALIAS_LOOP
      for (int64_t i = 0; i < n; ++i) {
        run[i] = prelu_select(run[i], repeated[i]);
      }
    }
  }
  for (; p < count; ++p) {
    float* row = y + p * pixel_stride;
EDGEGAN_NO_ALIAS_LOOP
    for (int64_t c = 0; c < channels; ++c) {
      row[c] = prelu_select(row[c], slope[c]);
    }
  }
}

}  // namespace

float fast_tanh(float x) { return tanh_rational(x); }

ActivateRunFn wide_activation_run(Activation activation) {
#if defined(EDGEGAN_HAVE_X86_KERNELS)
  // Tanh and Sigmoid only: the others' loops are memory-bound or call libm per value.
  if (activation == Activation::kTanh || activation == Activation::kSigmoid) {
    switch (active_isa()) {
      case Isa::kAvx512: return activate_run__avx512;
      case Isa::kAvx2: return activate_run__avx2;
      default: break;
    }
  }
#endif
  (void)activation;
  return nullptr;
}

void apply_activation(float* y, int64_t count, int64_t channels, int64_t pixel_stride,
                      Activation activation, float alpha, float beta, const float* slope) {
  if (activation == Activation::kNone) return;
  if (activation == Activation::kPRelu && slope) return prelu_pixels(y, count, channels, pixel_stride, slope);
  if (const ActivateRunFn run = wide_activation_run(activation)) {
    if (pixel_stride == channels) return run(y, count * channels, activation, alpha, beta);
    for (int64_t p = 0; p < count; ++p) run(y + p * pixel_stride, channels, activation, alpha, beta);
    return;
  }
  with_activation(activation, alpha, [&](auto f) { map_pixels(y, count, channels, pixel_stride, f); }, beta);
}

void activation_backward(int64_t count, const float* y, float* grad, Activation a, float alpha, float beta) {
  // One branch-free loop per activation (vectorised), not a switch per element.
  switch (a) {
    case Activation::kRelu:
      for (int64_t i = 0; i < count; ++i) grad[i] = y[i] > 0.f ? grad[i] : 0.f;
      break;
    case Activation::kLeakyRelu:  // alpha > 0: sign(y) = sign(x)
    case Activation::kPRelu:      // one slope, alpha
      for (int64_t i = 0; i < count; ++i) grad[i] = y[i] > 0.f ? grad[i] : grad[i] * alpha;
      break;
    case Activation::kTanh:
      for (int64_t i = 0; i < count; ++i) grad[i] *= 1.f - y[i] * y[i];
      break;
    case Activation::kSigmoid:
      for (int64_t i = 0; i < count; ++i) grad[i] *= y[i] * (1.f - y[i]);
      break;
    case Activation::kElu:  // alpha > 0: y > 0 iff x > 0; below, act' = alpha * exp(x) = y + alpha
      for (int64_t i = 0; i < count; ++i) grad[i] *= y[i] > 0.f ? 1.f : y[i] + alpha;
      break;
    case Activation::kSelu:  // alpha, gamma > 0: act' = gamma above 0, y + gamma * alpha below
      for (int64_t i = 0; i < count; ++i) grad[i] *= y[i] > 0.f ? beta : y[i] + beta * alpha;
      break;
    case Activation::kClip:  // 1 strictly inside [min, max]
      for (int64_t i = 0; i < count; ++i) grad[i] = y[i] > alpha && y[i] < beta ? grad[i] : 0.f;
      break;
    case Activation::kHardSigmoid:
      for (int64_t i = 0; i < count; ++i) grad[i] = y[i] > 0.f && y[i] < 1.f ? grad[i] * alpha : 0.f;
      break;
    case Activation::kSoftplus:  // sigmoid(x) = 1 - exp(-y)
      for (int64_t i = 0; i < count; ++i) grad[i] *= -std::expm1(-y[i]);
      break;
    case Activation::kHardSwish:
    case Activation::kMish:
    case Activation::kGelu:
    case Activation::kGeluTanh:
    case Activation::kSilu:  // not functions of y: activation_backward_from_input
      activation_backward_from_input(count, y, grad, a, alpha, beta);  // unreachable for validated callers
      break;
    case Activation::kNone: break;
  }
}

void activation_backward_from_input(int64_t count, const float* x, float* grad, Activation a, float alpha, float beta) {
  switch (a) {
    case Activation::kHardSwish:
      for (int64_t i = 0; i < count; ++i) {
        const float v = x[i];
        grad[i] *= v < -3.f ? 0.f : v > 3.f ? 1.f : (2.f * v + 3.f) * (1.f / 6.f);
      }
      return;
    case Activation::kMish:
      for (int64_t i = 0; i < count; ++i) {
        const float v = x[i];
        const float t = std::tanh(softplus_exact(v));
        const float s = 1.f / (1.f + std::exp(-v));
        grad[i] *= t + v * (1.f - t * t) * s;
      }
      return;
    case Activation::kGelu:  // Phi(x) + x * phi(x)
      for (int64_t i = 0; i < count; ++i) {
        const float v = x[i];
        grad[i] *= 0.5f * (1.f + std::erf(v * 0.70710678118654752f)) + v * 0.39894228040143268f * std::exp(-0.5f * v * v);
      }
      return;
    case Activation::kGeluTanh:
      for (int64_t i = 0; i < count; ++i) {
        const float v = x[i];
        const float t = std::tanh(kGeluTanhScale * (v + kGeluTanhCubic * v * v * v));
        grad[i] *= 0.5f * (1.f + t) + 0.5f * v * (1.f - t * t) * kGeluTanhScale * (1.f + 3.f * kGeluTanhCubic * v * v);
      }
      return;
    case Activation::kSilu:  // s + x s (1 - s)
      for (int64_t i = 0; i < count; ++i) {
        const float s = 1.f / (1.f + std::exp(-x[i]));
        grad[i] *= s * (1.f + x[i] * (1.f - s));
      }
      return;
    default: break;
  }
  // The others from their output.
  for (int64_t i0 = 0; i0 < count; i0 += 256) {
    float y[256];
    const int64_t n = count - i0 < 256 ? count - i0 : 256;
    for (int64_t i = 0; i < n; ++i) y[i] = activate(x[i0 + i], a, alpha, beta);
    activation_backward(n, y, grad + i0, a, alpha, beta);
  }
}

}  // namespace edgegan::cpu
