// Bias + activation applied where a kernel writes its output (the "epilogue"),
// so BatchNorm (folded into weights/bias by the converter) and activations cost
// no extra pass over memory.
#pragma once

#include <cmath>
#include <cstdint>

namespace edgegan::cpu {

enum class Activation : int { kNone = 0, kRelu = 1, kLeakyRelu = 2, kTanh = 3, kSigmoid = 4 };

struct Epilogue {
  const float* bias = nullptr;  // [channels], or nullptr for no bias
  Activation activation = Activation::kNone;
  float alpha = 0.01f;          // LeakyRelu slope
};

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

// Sets `count` pixels (each `channels` wide, `pixel_stride` floats apart) to the bias, or 0.
void fill_bias(float* y, int64_t count, int64_t channels, int64_t pixel_stride, const float* bias);

// rows[p][c] = activation(acc[p * channels + c] + bias[c]) for p < count, c < channels:
// a tile accumulated in scratch written to its (strided) output pixels in one pass.
void store_with_epilogue(const float* acc, int64_t count, int64_t channels, float* const* rows, const float* bias,
                         Activation activation, float alpha);

// tanh in float, branch-free (what apply_activation uses for Tanh and, as
// (1 + tanh(v/2)) / 2, for Sigmoid): within a few ulps of std::tanh.
float fast_tanh(float x);

// Applies the activation in place to `count` pixels laid out as in fill_bias.
void apply_activation(float* y, int64_t count, int64_t channels, int64_t pixel_stride,
                      Activation activation, float alpha);

}  // namespace edgegan::cpu
