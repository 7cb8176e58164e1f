// Bias + activation applied where a kernel writes its output (the "epilogue"),
// so BatchNorm (folded into weights/bias by the converter) and activations cost
// no extra pass over memory.
#pragma once

#include <cstdint>

#include "kernels_cpu/activation/activation.h"

namespace edgegan::cpu {

struct Epilogue {
  const float* bias = nullptr;  // [channels], or nullptr for no bias
  Activation activation = Activation::kNone;
  float alpha = 0.01f;          // LeakyRelu slope (and the other activations' first parameter)
  float beta = 0.f;             // Selu gamma, Clip max, HardSigmoid offset
};

// Sets `count` pixels (each `channels` wide, `pixel_stride` floats apart) to the bias, or 0.
void fill_bias(float* y, int64_t count, int64_t channels, int64_t pixel_stride, const float* bias);

// rows[p][c] = activation(acc[p * channels + c] + bias[c]) for p < count, c < channels:
// a tile accumulated in scratch written to its (strided) output pixels in one pass.
void store_with_epilogue(const float* acc, int64_t count, int64_t channels, float* const* rows, const float* bias,
                         Activation activation, float alpha, float beta = 0.f);

// The bias gradient: dbias[c] = sum of dy over `pixels` pixels of `channels` (overwritten).
void bias_backward(int64_t pixels, int64_t channels, const float* dy, float* dbias);

}  // namespace edgegan::cpu
