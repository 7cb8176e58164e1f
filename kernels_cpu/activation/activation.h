// The activations on the CPU: the scalar definition that reference kernels use, the
// vectorised forms that fused epilogues use (activation_functors.h), and the gradient.
// The enum itself is every backend's (kernels_common/activation.h).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels_common/activation.h"

namespace edgegan::cpu {

// The enum is every backend's (kernels_common/activation.h).
using kernels::Activation;
using kernels::kActivationCount;

// Whether the gradient follows from the activation's OUTPUT (activation_backward); the
// others (HardSwish, Mish, Gelu, GeluTanh, Silu: not monotonic) need the input
// (activation_backward_from_input) and so never fuse into a producer's epilogue.
inline bool activation_invertible(Activation a) {
  return a != Activation::kHardSwish && a != Activation::kMish && a != Activation::kGelu && a != Activation::kGeluTanh &&
         a != Activation::kSilu;
}

// GeluTanh's constants: sqrt(2 / pi) and the cubic term's weight.
inline constexpr float kGeluTanhScale = 0.7978845608028654f, kGeluTanhCubic = 0.044715f;

// softplus(v) = log(1 + exp(v)), without overflow.
inline float softplus_exact(float v) { return v > 20.f ? v : std::log1p(std::exp(v)); }

// The definition (std::tanh and std::exp): what reference kernels compute.
inline float activate(float v, Activation a, float alpha, float beta = 0.f) {
  switch (a) {
    case Activation::kNone: return v;
    case Activation::kRelu: return v > 0.f ? v : 0.f;
    case Activation::kLeakyRelu:
    case Activation::kPRelu: return v > 0.f ? v : v * alpha;
    case Activation::kTanh: return std::tanh(v);
    case Activation::kSigmoid: return 1.f / (1.f + std::exp(-v));
    case Activation::kElu: return v > 0.f ? v : alpha * std::expm1(v);
    case Activation::kSelu: return v > 0.f ? beta * v : beta * alpha * std::expm1(v);
    case Activation::kClip: return std::min(beta, std::max(alpha, v));
    case Activation::kHardSigmoid: return std::min(1.f, std::max(0.f, alpha * v + beta));
    case Activation::kHardSwish: return v * std::min(1.f, std::max(0.f, v / 6.f + 0.5f));
    case Activation::kSoftplus: return softplus_exact(v);
    case Activation::kMish: return v * std::tanh(softplus_exact(v));
    case Activation::kGelu: return 0.5f * v * (1.f + std::erf(v * 0.70710678118654752f));
    case Activation::kGeluTanh: return 0.5f * v * (1.f + std::tanh(kGeluTanhScale * (v + kGeluTanhCubic * v * v * v)));
    case Activation::kSilu: return v / (1.f + std::exp(-v));
  }
  return v;
}

// tanh in float, branch-free (what apply_activation uses for Tanh and, as
// (1 + tanh(v/2)) / 2, for Sigmoid): within a few ulps of std::tanh.
float fast_tanh(float x);

// Applies the activation in place to `count` pixels of `channels` floats,
// `pixel_stride` floats apart (vectorised; tanh and sigmoid through fast_tanh).
// kPRelu reads `slope` ([channels], the pixels' first channel's slope first).
void apply_activation(float* y, int64_t count, int64_t channels, int64_t pixel_stride, Activation activation, float alpha,
                      float beta = 0.f, const float* slope = nullptr);

// The gradient from the activation's OUTPUT y (what a fused epilogue leaves):
// dx = dy * act'(x), written in place into `grad` (which holds dy on entry). For the
// activations activation_invertible() accepts (kPRelu: one slope, alpha > 0; a slope
// per channel: prelu_backward_from_output in epilogue.h).
void activation_backward(int64_t count, const float* y, float* grad, Activation activation, float alpha, float beta = 0.f);

// The same from the activation's INPUT x: every activation (the non-invertible ones need it).
void activation_backward_from_input(int64_t count, const float* x, float* grad, Activation activation, float alpha, float beta = 0.f);

}  // namespace edgegan::cpu
