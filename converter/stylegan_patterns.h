// StyleGAN2 as torch.onnx exports it at a fixed batch, rewritten into batch-agnostic ONNX
// before the analysis (docs/ops.md, "StyleGAN2"):
// * a modulated convolution, fused (weight = W * style per sample, optionally
//   demodulated, the batch folded into the groups of a Conv or a stride-2 ConvTranspose
//   by reshapes) becomes x * style, the fixed-weight conv, times the demodulation
//   coefficients;
// * the demodulation coefficients' sum over (in, kh, kw) of (W * style)^2, computed on a
//   [N, O, I, kh, kw] tensor, becomes style^2 times the weight's squared sums (a Gemm);
// * zero insertion by reshape + pad followed by a depthwise FIR conv (upfirdn2d's
//   up-sampling) becomes a grouped transposed convolution whose kernel is the FIR, so no
//   zero is inserted;
// * the learned constant input repeated to the batch (Expand + Tile) stays one sample,
//   broadcast by its reader, and reshapes that name the export batch copy the batch.
// A graph without these patterns is left as it is.
#pragma once

#include <onnx/onnx_pb.h>

namespace edgegan::converter {

// Rewrites `model` in place; returns the number of patterns rewritten.
int rewrite_stylegan_patterns(onnx::ModelProto& model);

// Whether `model` may hold a pattern (cheap: a Conv or ConvTranspose whose weight is
// computed, or a reshape to rank 6), so the caller copies only those models.
bool may_hold_stylegan_patterns(const onnx::ModelProto& model);

}  // namespace edgegan::converter
