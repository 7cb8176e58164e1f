// Bias + activation (+ residual) applied where a kernel writes its output (the
// "epilogue"), so BatchNorm (folded into weights/bias by the converter), activations
// and residual/skip Adds cost no extra pass over memory.
#pragma once

#include <cstdint>

#include "kernels_cpu/activation/activation.h"

namespace edgegan::cpu {

struct Epilogue {
  const float* bias = nullptr;  // [channels], or nullptr for no bias
  Activation activation = Activation::kNone;
  float alpha = 0.01f;          // LeakyRelu slope (and the other activations' first parameter)
  float beta = 0.f;             // Selu gamma, Clip max, HardSigmoid offset
  // A tensor of the output's layout ([pixels][channels], pixel stride = channels) added
  // after the activation: y = act(acc + bias) + residual. nullptr: none. It must not
  // share memory with the output (kernels read it after writing the block).
  const float* residual = nullptr;
  // kPRelu: the slope of each output channel ([channels]; a fused PRelu op).
  const float* slope = nullptr;

  // The epilogue of the output channels from `column` on (a task's block of them): bias
  // and slopes shifted to that channel.
  Epilogue from_column(int64_t column) const {
    Epilogue e = *this;
    if (e.bias) e.bias += column;
    if (e.slope) e.slope += column;
    return e;
  }
  // The activation of output channel c's value v (reference kernels).
  float activate(float v, int64_t c) const { return cpu::activate(v, activation, slope ? slope[c] : alpha, beta); }
};

// Sets `count` pixels (each `channels` wide, `pixel_stride` floats apart) to the bias, or 0.
void fill_bias(float* y, int64_t count, int64_t channels, int64_t pixel_stride, const float* bias);

// rows[p][c] = activation(acc[p * channels + c] + bias[c]) for p < count, c < channels:
// a tile accumulated in scratch written to its (strided) output pixels in one pass.
// kPRelu reads slope[c].
void store_with_epilogue(const float* acc, int64_t count, int64_t channels, float* const* rows, const float* bias,
                         Activation activation, float alpha, float beta = 0.f, const float* slope = nullptr);

// The epilogue's end on pixels already holding acc + bias: the activation in place, then
// (ep.residual set) the residual's matching pixels added. y points at pixel `first` of an
// output whose pixels are `channels` floats apart (so are the residual's); `count` pixels.
void finish_epilogue(float* y, int64_t first, int64_t count, int64_t channels, const Epilogue& ep);
// The same on `width` channels from channel `column` of each pixel (a task that owns a
// range of output channels); y points at that channel of pixel `first`.
void finish_epilogue(float* y, int64_t first, int64_t count, int64_t channels, int64_t column, int64_t width, const Epilogue& ep);

// y[p][c] += residual[p][c] over `count` pixels of `channels` floats, both `pixel_stride` apart.
void add_residual(float* y, int64_t count, int64_t channels, int64_t pixel_stride, const float* residual);

// The gradient through a fused per-channel PRelu from its output y (slopes > 0, so y and
// x have one sign): grad = dy * (y > 0 ? 1 : slope[c]) in place over `pixels` pixels of
// `channels`; with dslope, first dslope[c] += sum of dy * x over y <= 0 (x = y / slope[c]),
// in pixel order.
void prelu_backward_from_output(int64_t pixels, int64_t channels, const float* slope, const float* y, float* grad, float* dslope);

// The fused activation's gradient from the output (activation_backward, or the above
// for a per-channel PRelu): in place on grad, `pixels` pixels of `channels`.
void epilogue_activation_backward(int64_t pixels, int64_t channels, const float* y, float* grad, const Epilogue& ep, float* dslope = nullptr);

// The bias gradient: dbias[c] = sum of dy over `pixels` pixels of `channels` (overwritten).
void bias_backward(int64_t pixels, int64_t channels, const float* dy, float* dbias);

}  // namespace edgegan::cpu
