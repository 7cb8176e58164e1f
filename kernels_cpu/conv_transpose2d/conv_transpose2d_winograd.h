// Split transposed convolution with Winograd F(2x2, 2x2) on the sub-kernels.
//
// Where the kernel is twice the stride (k4 s2, the DCGAN layer), every phase's
// sub-kernel is 2x2 and reads the input at offsets {0, 1} on both axes. So every
// phase of a 2x2 block of its outputs reads the same 3x3 input window, and F(2x2, 2x2)
// (Lavin & Gray 2016, with the 1-D transforms below) turns the 16 products of one block
// per channel pair into 9:
//   filter  u = (h0, h0 + h1, h1)        input  v = (d0 - d1, d1, d2 - d1)
//   output  y0 = m0 + m1, y1 = m1 + m2   where m = u .* v, applied along both axes.
// The input transform (subtractions only) is shared by all stride*stride phases; the
// 9 products are one GEMM each over the channels ([windows x Cin] x [Cin x Cout]) on
// the same micro-kernels as the split path; the output transform (additions only)
// writes each phase's block straight to its strided output pixels with the epilogue.
// Per output the multiplications fall from 4 per channel pair to 9/4, and every
// coefficient is 0 or +-1, so the only rounding added is that of a few additions.
//
// The transformed filters (9 per phase, each Cin x Cout in the split layout's column
// panels) are made once by the session from the sub-kernels, as the pixel-lanes heads'
// weights are: 9/4 of the float sub-kernels; or, for wide layers, in every run. The
// widest (a U-Net decoder's 512- and 1024-channel layers: 9-38 MiB of them) are made a
// slice at a time, inside the kernel: every window's input transform is made first, then
// each task, one (phase, 64-column block), transforms its filters' slice into its
// thread's scratch and multiplies every window by it, so a filter element is made once
// per run and read from cache by every window (with whole filters, each 16-window task
// streams all of them from memory).
#pragma once

#include <cstdint>

#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"
#include "kernels_cpu/common/epilogue.h"

namespace edgegan::cpu {

// The layer's geometry allows the Winograd form: every phase on both axes has two taps,
// at input offsets 0 and 1 (kernel = 2 * stride, dilation 1), and it is not a head.
bool conv_transpose2d_winograd_applies(const ConvShape& shape, const ConvTranspose2DWeights& weights);
// ... and the Winograd form is the faster one for this layer: enough windows (output
// pixels) per transformed filter, and filters that fit L2 (the .cpp has the measurements).
bool conv_transpose2d_winograd_pays(const ConvShape& shape, const ConvTranspose2DWeights& weights);

// Whether a session keeps the layer's transformed filters (at most 2 MiB); false: each
// run makes them, whole in the workspace where many windows share them, or sliced.
bool conv_transpose2d_winograd_keeps_filters(const ConvShape& shape);
// Whether the layer, where the Winograd form pays, runs it sliced (no whole filters:
// pass transformed = nullptr to conv_transpose2d_winograd).
bool conv_transpose2d_winograd_sliced(const ConvShape& shape);

// Floats of the transformed filters: phases * 9 * Cin * Cout.
int64_t conv_transpose2d_winograd_weight_floats(const ConvShape& shape);
// From the split sub-kernels (float or fp16) into `out`, per phase 9 matrices in
// weights.tap_layout(shape). Requires conv_transpose2d_winograd_applies.
void pack_conv_transpose2d_winograd_weights(const ConvShape& shape, const ConvTranspose2DWeights& weights, float* out, int threads = 1);

// Scratch at `threads` threads, in floats, for whole filters or the sliced form; with
// `halves`, conv_transpose2d_winograd_halves' (each thread's widened window and its
// blocks of outputs before they are narrowed, 29 KiB at 64 input channels).
int64_t conv_transpose2d_winograd_workspace(const ConvShape& shape, int threads, bool sliced = false, bool halves = false);
// y = convT(x) with the epilogue, NHWC, the same contract as conv_transpose2d_split.
// `transformed` is pack_conv_transpose2d_winograd_weights' output, or nullptr: the
// sliced form, on the sub-kernels; `workspace` holds at least
// conv_transpose2d_winograd_workspace(shape, threads, transformed == nullptr) floats.
// Both give the same floats.
void conv_transpose2d_winograd(const ConvShape& shape, const ConvTranspose2DWeights& weights, const float* transformed,
                               const float* x, float* y, const Epilogue& epilogue, int threads, float* workspace);
// The same on an fp16 session's halves: each window's 9 input pixels widened before its
// input transform, each block's outputs transformed into floats and narrowed. The fp32
// call's floats, rounded once; returns whether a finite output became infinite.
bool conv_transpose2d_winograd_halves(const ConvShape& shape, const ConvTranspose2DWeights& weights, const float* transformed,
                                      const uint16_t* x, uint16_t* y, const Epilogue& epilogue, int threads, float* workspace);

}  // namespace edgegan::cpu
