// Transposed convolution split into stride×stride phases, the product path:
//   y[N, out_h, out_w, Cout] = convT(x[N, in_h, in_w, Cin]) + bias, then activation.
// Per phase, a dense stride-1 correlation with the pre-split sub-kernel, written
// straight into the phase's strided output positions; taps outside the input are
// trimmed, no zero is read. Within it, three forms chosen per layer: GEMM tiles on
// the gemm micro-kernels, the Winograd form (conv_transpose2d_winograd.h) and, for
// 1-3 channel heads, the pixel-lanes or dot paths (conv_transpose2d_pixel_lanes.h).
// The baselines with the same contract: conv_transpose2d_reference.h,
// conv_transpose2d_zero_insert.h, conv_transpose2d_col2im.h.
#pragma once

#include <cstdint>

#include "kernels_cpu/common/epilogue.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"

namespace edgegan::cpu {

// Scratch of the split algorithm at `threads` threads, in floats, for the active ISA:
// the heads' rows of transposed input per thread (pixel-lanes path) or their
// transposed sub-kernels (dot path); with weights.winograd, the Winograd form's
// (conv_transpose2d_winograd.h); 0 for every other layer, whose tiles accumulate in
// a few KiB of stack and go straight to their strided outputs.
int64_t conv_transpose2d_split_workspace(const ConvShape& shape, const ConvTranspose2DWeights& weights, int threads);
// Whether the call takes the phase-lanes path (conv_transpose2d_phase_lanes.h) for this
// layer on the active ISA: thin layers where it was measured to pay.
bool conv_transpose2d_split_phase_lanes(const ConvShape& shape, const ConvTranspose2DWeights& weights);
// `workspace` holds workspace_floats floats (contents ignored); without one as large as
// conv_transpose2d_split_workspace says, the call allocates its own.
void conv_transpose2d_split(const ConvShape& shape, const ConvTranspose2DWeights& weights,
                            const float* x, float* y, const Epilogue& epilogue, int threads,
                            float* workspace = nullptr, int64_t workspace_floats = 0);

// An fp16 session's route, x and y halves: the GEMM path (each tap's input rows widened
// as they are gathered, the tile summed in floats, its epilogue applied and narrowed)
// and the Winograd form (conv_transpose2d_winograd_halves); the heads and thin layers
// are left to the adapter. The floats are the fp32 call's, rounded once. Returns whether
// a finite output became infinite. Workspace: conv_transpose2d_split_halves_workspace
// floats (without it the call allocates its own).
bool conv_transpose2d_split_halves_applies(const ConvShape& shape, const ConvTranspose2DWeights& weights);
int64_t conv_transpose2d_split_halves_workspace(const ConvShape& shape, const ConvTranspose2DWeights& weights, int threads);
bool conv_transpose2d_split_halves(const ConvShape& shape, const ConvTranspose2DWeights& weights, const uint16_t* x, uint16_t* y,
                                   const Epilogue& epilogue, int threads, float* workspace = nullptr, int64_t workspace_floats = 0);

}  // namespace edgegan::cpu
