// StyleGAN2's modulated convolution on the GPU, around a fixed-weight convolution
// (kernels_cpu/modulated_conv/modulated_conv.h defines it): the demodulation
// coefficients from the style and the weight's squared sums, the input scaled by the
// style, and the convolution's output scaled by the coefficients with bias and
// activation. Each element is one thread's; the coefficient's sum runs in a fixed order,
// so runs are bit-identical. Maps are NHWC.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels_cuda/common/activation.h"

namespace edgegan::cuda {

// coefficients[n][o] = 1 / sqrt(sum_i style[n][i]^2 * wsq[o][i] + epsilon).
void modulated_conv_demodulation(int batch, int in_channels, int out_channels, const float* style, const float* wsq,
                                 float epsilon, float* coefficients, cudaStream_t stream);

// y[n][p][c] = x[n][p][c] * style[n][c]; in place allowed.
void modulated_conv_scale_input(int batch, long long pixels, int channels, const float* style, const float* x, float* y,
                                cudaStream_t stream);

// In place: y[n][p][c] = act(y * coefficients[n][c] + bias[c]); coefficients or bias may be null.
void modulated_conv_finish_output(int batch, long long pixels, int channels, const float* coefficients, const float* bias,
                                  float* y, ActivationParams activation, cudaStream_t stream);

}  // namespace edgegan::cuda
