// 3x3 stride-1 convolution in the Winograd form F(4x4, 3x3).
//
// Each 4x4 block of outputs reads a 6x6 window of the input. Per channel pair the
// window d and the filter g are transformed (V = Bᵀ d B, U = G g Gᵀ, both 6x6), the 36
// elements multiplied (M = U .* V) and summed over the input channels, and the block
// is Aᵀ M A (Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks", with the
// interpolation points 0, ±1, ±2, ∞). The sum over channels of each element is one GEMM
// [windows x Cin] x [Cin x Cout] on the same micro-kernels as the direct path, so the
// 144 multiplications of a block per channel pair become 36: a quarter.
//
// The transforms' coefficients reach 8 (A) and 5 (B), so the result rounds a little
// more than the direct sum: about 1e-6 relative for unit-scale data, within the
// engine's 1e-4 tolerances.
//
// The transformed filters (36 matrices Cin x Cout, 4x the 3x3 weights) are made once
// per session (and again when a trainer changes the weights) where they take at most
// 3 MiB. Wider layers (CycleGAN's 256-channel blocks: 9 MiB each) run in F(6x6, 3x3)
// on filter slices made per task (conv2d_winograd_f6.h) where they have windows enough;
// this form makes its filters at the start of every run, into scratch all layers
// share, only for layers past the session's budget of kept copies.
#pragma once

#include <cstdint>

#include "kernels_common/conv_geometry.h"
#include "kernels_cpu/common/conv_input_map.h"
#include "kernels_cpu/common/epilogue.h"

namespace edgegan::cpu {

// A 3x3 kernel, stride 1, dilation 1, no groups.
bool conv2d_winograd_applies(const ConvShape& shape, int64_t groups);
// ... and the Winograd form is the faster one for this layer (the .cpp has the
// measurements): filters of the kept size only; wider ones are conv2d_winograd_f6_pays'.
bool conv2d_winograd_pays(const ConvShape& shape, int64_t groups);

// Floats of the transformed filters: 36 * Cin * Cout.
int64_t conv2d_winograd_weight_floats(const ConvShape& shape);
// Whether the layer's transformed filters are of the size a session keeps (it still
// makes them in each run past its copy budget).
bool conv2d_winograd_keeps_filters(const ConvShape& shape);
// From weights [3][3][Cin][Cout] (pack_conv2d_weights' layout) into `out`: 36 matrices
// [Cin][Cout], element e = 6a + b of U = G g Gᵀ (computed in double, rounded once: the
// same bits at any thread count).
void pack_conv2d_winograd_weights(const ConvShape& shape, const float* weights, float* out, int threads = 1);

// Scratch at `threads` threads, in floats; with `halves`, conv2d_winograd_halves' (each
// thread's window of widened pixels and a block of outputs before they are narrowed).
int64_t conv2d_winograd_workspace(const ConvShape& shape, int threads, bool halves = false);
// y = conv(x) with the epilogue (bias, activation, residual), NHWC, the contract of
// conv2d_trimmed (`map`: x read through a fused input map). `transformed` is
// pack_conv2d_winograd_weights' output.
void conv2d_winograd(const ConvShape& shape, const float* transformed, const float* x, float* y, const Epilogue& epilogue, int threads,
                     float* workspace, const ConvInputMap* map = nullptr);
// The same on an fp16 session's halves, without a residual: each window's 36 input pixels
// widened before its input transform, each window's outputs transformed in floats with
// bias and activation and narrowed. The fp32 call's floats, rounded once; returns whether
// a finite output became infinite.
bool conv2d_winograd_halves(const ConvShape& shape, const float* transformed, const uint16_t* x, uint16_t* y, const Epilogue& epilogue,
                            int threads, float* workspace, const ConvInputMap* map = nullptr);

}  // namespace edgegan::cpu
