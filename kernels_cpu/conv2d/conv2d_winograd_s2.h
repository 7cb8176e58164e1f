// 4x4 stride-2 convolution (a U-Net's or a PatchGAN's downsampling layers) in the
// Winograd form, on its input's polyphase components.
//
// Along one axis, output o reads inputs 2o - pad + k, k = 0..3. With k = 2i + a (phase
// a, tap i of 2) that is 2(o + i) + a - pad: tap i of a stride-1 2-tap correlation over
// the phase-a samples x[2t + a - pad]. So in 2-D the layer is the sum of four stride-1
// 2x2 correlations, one per (a_h, a_w) phase of the input, each with the 2x2 filter
// w[2i + a_h][2j + a_w]; and each is Winograd's F(2x2, 2x2) (winograd_f2x2.h): a 2x2
// block of outputs from a 3x3 window of its phase's samples, 9 products per channel
// pair instead of 16. The four sums meet in the transform domain, so each of the 9
// elements is one GEMM [windows x 4 Cin] x [4 Cin x Cout]: 36 products per block and
// channel pair where the direct form has 64.
//
// No transformed filters are kept: each task (a 64-column block of outputs over up to
// 256 windows) transforms its slice of the filters from the layer's weights into its
// thread's scratch, after every window's input transform has been made once into the
// workspace. Every transform coefficient is 0 or +-1.
#pragma once

#include <cstdint>

#include "kernels_common/conv_geometry.h"
#include "kernels_cpu/common/conv_input_map.h"
#include "kernels_cpu/common/epilogue.h"

namespace edgegan::cpu {

// A 4x4 kernel, stride 2, dilation 1, no groups.
bool conv2d_winograd_s2_applies(const ConvShape& shape, int64_t groups);
// ... and the form is the faster one for this layer (the .cpp has the measurements).
bool conv2d_winograd_s2_pays(const ConvShape& shape, int64_t groups);

// Scratch at `threads` threads, in floats: every window's input transform, and each
// thread's filter slice and products.
int64_t conv2d_winograd_s2_workspace(const ConvShape& shape, int threads);
// y = conv(x) with the epilogue (bias, activation, residual), NHWC, weights
// [4][4][Cin][Cout]: the contract of conv2d_trimmed (`map`: x read through a fused
// input map). The same floats at any thread count.
void conv2d_winograd_s2(const ConvShape& shape, const float* weights, const float* x, float* y, const Epilogue& epilogue, int threads,
                        float* workspace, const ConvInputMap* map = nullptr);

}  // namespace edgegan::cpu
