// The activations of the engine, in one place: the enum every layer of the engine
// shares (the model file's schema::Activation has the same numbering, which the
// engine asserts), the scalar definition that reference kernels use, the vectorised
// forms that fused epilogues use (activation_functors.h), and the gradient.
#pragma once

#include <cmath>
#include <cstdint>

namespace edgegan::cpu {

enum class Activation : int { kNone = 0, kRelu = 1, kLeakyRelu = 2, kTanh = 3, kSigmoid = 4 };
inline constexpr int kActivationCount = 5;

// The definition (std::tanh and std::exp): what reference kernels compute.
inline float activate(float v, Activation a, float alpha) {
  switch (a) {
    case Activation::kNone: return v;
    case Activation::kRelu: return v > 0.f ? v : 0.f;
    case Activation::kLeakyRelu: return v > 0.f ? v : v * alpha;
    case Activation::kTanh: return std::tanh(v);
    case Activation::kSigmoid: return 1.f / (1.f + std::exp(-v));
  }
  return v;
}

// tanh in float, branch-free (what apply_activation uses for Tanh and, as
// (1 + tanh(v/2)) / 2, for Sigmoid): within a few ulps of std::tanh.
float fast_tanh(float x);

// Applies the activation in place to `count` pixels of `channels` floats,
// `pixel_stride` floats apart (vectorised; tanh and sigmoid through fast_tanh).
void apply_activation(float* y, int64_t count, int64_t channels, int64_t pixel_stride, Activation activation, float alpha);

// The gradient from the activation's OUTPUT y (what a fused epilogue leaves):
// dx = dy * act'(x), written in place into `grad` (which holds dy on entry).
void activation_backward(int64_t count, const float* y, float* grad, Activation activation, float alpha);

}  // namespace edgegan::cpu
