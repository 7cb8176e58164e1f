// 3x3 stride-1 convolution in the Winograd form F(6x6, 3x3), for the wide layers whose
// F(4x4, 3x3) filters are too large to keep (CycleGAN's 256-channel residual blocks).
//
// Each 6x6 block of outputs reads an 8x8 window of the input; per channel pair the
// window d and the filter g are transformed (V = Bᵀ d B, U = G g Gᵀ, both 8x8), the 64
// elements multiplied and summed over the input channels, and the block is Aᵀ M A, with
// the interpolation points 0, ±1, ±2, ±1/2 and ∞. Per block and channel pair that is 64
// products where the direct form has 324 and F(4x4, 3x3) 81 (its 36 per 4x4 block).
//
// The work runs element-major, in chunks of windows:
//   1. every window of the chunk is transformed into the workspace, V[e][window][Cin];
//   2. one task per (row of 8 elements, 32 output channels) makes its slice of the
//      transformed filters from the layer's weights (256 KiB at Cin = 256, held in L2)
//      and multiplies every window of the chunk by it, into M[e][window][Cout];
//   3. every window's 6x6 outputs are made from M, with the epilogue.
// So no transformed filter is kept or made whole (a 256-channel layer's would take
// 16 MiB), and each slice is read from cache by every window of the chunk.
//
// The transforms' coefficients reach 21/4 (B) and 32 (A): the result rounds more than
// F(4x4, 3x3)'s, about 1e-5 relative for unit-scale data at Cin = 256, within the
// engine's 1e-4 tolerances. The filter transform runs in double, rounded once.
#pragma once

#include <cstdint>

#include "kernels_common/conv_geometry.h"
#include "kernels_cpu/common/conv_input_map.h"
#include "kernels_cpu/common/epilogue.h"

namespace edgegan::cpu {

// A 3x3 kernel, stride 1, dilation 1, no groups (what conv2d_winograd_applies says).
// ... and this form is the faster one for the layer (the .cpp has the measurements).
bool conv2d_winograd_f6_pays(const ConvShape& shape, int64_t groups);

// Scratch at `threads` threads, in floats: a chunk's transformed windows and products,
// and each thread's filter slice.
int64_t conv2d_winograd_f6_workspace(const ConvShape& shape, int threads);
// y = conv(x) with the epilogue (bias, activation, residual), NHWC, weights
// [3][3][Cin][Cout]: the contract of conv2d_trimmed (`map`: x read through a fused
// input map). The same floats at any thread count.
void conv2d_winograd_f6(const ConvShape& shape, const float* weights, const float* x, float* y, const Epilogue& epilogue, int threads,
                        float* workspace, const ConvInputMap* map = nullptr);

}  // namespace edgegan::cpu
