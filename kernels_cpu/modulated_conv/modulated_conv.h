// StyleGAN2's modulated convolution around a fixed-weight convolution. Per sample n, with
// style s[n][Cin] and the constant weights W:
//   y[n][o] = act(d[n][o] * conv_W(x[n] * s[n])[o] + bias[o]),
//   d[n][o] = 1 / sqrt(sum_i s[n][i]^2 * Wsq[o][i] + eps)   (1 without demodulation),
//   Wsq[o][i] = sum over taps of W[o][i][tap]^2.
// That is the convolution with per-sample weights W[o][i] * s[n][i] scaled to unit norm
// per output channel, without forming them: the convolution in between is any of the
// fixed-weight kernels (GEMM, Winograd, phase-split transposed). Maps are NHWC.
#pragma once

#include <cstdint>

#include "kernels_cpu/activation/activation.h"

namespace edgegan::cpu {

// wsq[o][i] = sum over taps of w^2, from weights in the file's layout
// [taps][in_channels][out_channels] (a Conv2D's [kh][kw][Cin][Cout]; for a transposed
// conv, its kernel before the phase split, transposed to that layout).
void modulated_conv_squared_sums(int64_t taps, int64_t in_channels, int64_t out_channels, const float* weights, float* wsq);

// coefficients[n][o] = d[n][o] above, for `batch` samples of style [batch][in_channels].
void modulated_conv_demodulation(int64_t batch, int64_t in_channels, int64_t out_channels, const float* style,
                                 const float* wsq, float epsilon, float* coefficients);

// y[n][p][c] = x[n][p][c] * style[n][c] over `pixels` pixels per sample. In place allowed.
void modulated_conv_scale_input(int64_t batch, int64_t pixels, int64_t channels, const float* style, const float* x, float* y);

// In place on the convolution's output y [batch][pixels][channels]:
// y = act(y * coefficients[n][c] + bias[c]); coefficients null: no scaling (no
// demodulation), bias null: none.
void modulated_conv_finish_output(int64_t batch, int64_t pixels, int64_t channels, const float* coefficients,
                                  const float* bias, float* y, Activation activation, float alpha, float beta = 0.f);

}  // namespace edgegan::cpu
