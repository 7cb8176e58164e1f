// Transposed convolution, NHWC activations. Four implementations with one contract:
//   y[N, out_h, out_w, Cout] = convT(x[N, in_h, in_w, Cin]) + bias, then activation.
//
//   reference   — direct scatter loop over ONNX-layout weights [Cin][Cout][kh][kw]; obviously correct.
//   split       — the product path: per phase, a dense stride-1 correlation with the
//                 pre-split sub-kernel, written straight into the phase's strided output
//                 positions; taps outside the input are trimmed, no zero is read.
//   zero_insert — baseline: builds the zero-inserted, padded input and runs a stride-1
//                 conv with the flipped full kernel over it (what naive engines do).
//   col2im      — baseline: GEMM of x with the full kernel into a column buffer of
//                 Cout*kh*kw per input pixel, then col2im scatter-add (PyTorch/ORT CPU).
// The baselines use the same GEMM as `split`, so timing ratios show the algorithm.
#pragma once

#include <cstdint>

#include "kernels_cpu/conv_transpose_geometry.h"
#include "kernels_cpu/epilogue.h"

namespace edgegan::cpu {

void conv_transpose2d_reference(const DeconvShape& shape, const float* x, const float* onnx_weights,
                                float* y, const Epilogue& epilogue);

// Scratch of the split algorithm at `threads` threads, in floats, for the active ISA:
// the heads' rows of transposed input per thread (pixel-lanes path) or their
// transposed sub-kernels (dot path); with weights.winograd, the Winograd form's
// (conv_transpose_winograd.h); 0 for every other layer, whose tiles accumulate in
// a few KiB of stack and go straight to their strided outputs.
int64_t conv_transpose2d_split_workspace(const DeconvShape& shape, const SplitDeconvWeights& weights, int threads);
// `workspace` holds workspace_floats floats (contents ignored); without one as large as
// conv_transpose2d_split_workspace says, the call allocates its own.
void conv_transpose2d_split(const DeconvShape& shape, const SplitDeconvWeights& weights,
                            const float* x, float* y, const Epilogue& epilogue, int threads,
                            float* workspace = nullptr, int64_t workspace_floats = 0);

// full_kernel: [kh][kw][Cin][Cout] (assemble_full_deconv_kernel, kTapsFirst).
int64_t conv_transpose2d_zero_insert_workspace(const DeconvShape& shape);  // floats
void conv_transpose2d_zero_insert(const DeconvShape& shape, const float* full_kernel, const float* x,
                                  float* y, float* workspace, const Epilogue& epilogue, int threads);

// col_kernel: [Cin][kh][kw][Cout] (assemble_full_deconv_kernel, kChannelsFirst).
int64_t conv_transpose2d_col2im_workspace(const DeconvShape& shape);  // floats
void conv_transpose2d_col2im(const DeconvShape& shape, const float* col_kernel, const float* x,
                             float* y, float* workspace, const Epilogue& epilogue, int threads);

}  // namespace edgegan::cpu
