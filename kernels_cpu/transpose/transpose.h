// Transpose: a permutation of a tensor's storage axes (kernels_common/transpose_shape.h).
// The reference walks the output's multi-index; the fast forward merges input axes that
// stay neighbours, then copies runs along the output's innermost axis, outer rows on
// threads. The backward is the inverse permutation of dy.
#pragma once

#include <cstdint>

#include "kernels_common/transpose_shape.h"

namespace edgegan::cpu {

void transpose_reference(const TransposeShape& s, const float* x, float* y);
void transpose(const TransposeShape& s, const float* x, float* y, int threads);

// dx = dy permuted back; overwrites dx, or adds to it when `accumulate`.
void transpose_backward(const TransposeShape& s, const float* dy, float* dx, bool accumulate, int threads);

}  // namespace edgegan::cpu
