// Window attention (SwinIR/HAT-class transformers) as torch.onnx exports it, rewritten into
// ONNX that keeps the batch first, before the analysis (docs/ops.md, "Transformer
// super-resolution"):
// * the attention's qkv.permute(2, 0, 3, 1, 4) followed by qkv[0], qkv[1], qkv[2] (a
//   Transpose that moves the batch, read only by Gathers of one constant index on its axis
//   0) becomes, per Gather, the Slice of that index on the axis the Transpose brought to
//   the front, a Squeeze of it, and the Transpose of the rest, which keeps the batch first;
//   so does qkv.unbind(0) (a Split of that axis into pieces of 1, each Squeezed).
// A graph without the pattern is left as it is; a near miss stays as exported and is
// refused by the op that cannot take it.
#pragma once

#include <onnx/onnx_pb.h>

namespace edgegan::converter {

// Rewrites `model` in place; returns the number of patterns rewritten.
int rewrite_window_patterns(onnx::ModelProto& model);

// Whether `model` may hold a pattern (cheap: a Transpose read by a Gather or a Split), so the caller
// copies only those models.
bool may_hold_window_patterns(const onnx::ModelProto& model);

}  // namespace edgegan::converter
