// Groups folded into the batch, unfolded after the analysis (docs/ops.md, "Window
// attention"): SwinIR's window_partition views its [N, H, W, C] map as [N·nW, ws, ws, C],
// and every tensor of the attention keeps the windows in dimension 0 with the batch. Such
// a value (dimension 0 the batch times the same k > 1 at both analysed batch sizes) is
// rewritten to carry k after the batch: [N, k, d1, ...], or [N, k·d1, d2] at rank 3 (the
// same bytes, row-major, where [N, k, d1, d2] would be stored NHWC as a map). One table,
// per ONNX op, says how each node reading or writing such a value is rewritten; anything
// else is refused, naming the node.
#pragma once

#include <optional>

#include <onnx/onnx_pb.h>

#include "converter/onnx_graph.h"

namespace edgegan::converter {

// When passes a and b of `model`'s graph (at two batch sizes) hold run-time values whose
// dimension 0 is the batch times one k > 1 in both, a copy of `model` in which each such
// value carries k after the batch; nullopt when there is none.
std::optional<onnx::ModelProto> unfold_batch_folds(const onnx::ModelProto& model, const AnalysisPass& a, const AnalysisPass& b);

}  // namespace edgegan::converter
