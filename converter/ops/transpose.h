// The general Transpose of a run-time tensor, which DepthToSpace's lowering (the owner of
// ONNX Transpose, for pixel shuffles) hands over when the Transpose is not a shuffle.
#pragma once

#include "converter/lowering.h"

namespace edgegan::converter {

// ONNX perm (default reversed), checked: a permutation that keeps the batch first.
std::vector<int64_t> transpose_perm(const Node& n, size_t rank);
void lower_transpose(const Node& n, Lowering& l);

}  // namespace edgegan::converter
