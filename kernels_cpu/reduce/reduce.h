// Reduce: sum, mean, max or L2 norm of a tensor over some of its storage axes
// (kernels_common/reduce_shape.h). The reference accumulates in double over each
// output's elements in index order; the fast forward takes the contiguous block form
// [outer, reduce, inner] (pixel norm's channels, squeeze-and-excitation's H x W) with
// float sums in a fixed order (threads split outputs, never a sum), and every other
// shape through one strided pass. The backward spreads dy over the reduced elements:
// as is (sum), / count (mean), x / y (L2), split evenly between the elements equal to
// the maximum (max).
#pragma once

#include <cstdint>

#include "kernels_common/reduce_shape.h"

namespace edgegan::cpu {

void reduce_reference(const ReduceShape& s, ReduceOp op, const float* x, float* y);
void reduce(const ReduceShape& s, ReduceOp op, const float* x, float* y, int threads);

// dx from dy, x and the forward's y; overwrites dx, or adds to it when `accumulate`.
// workspace: reduce_backward_workspace(s) floats (max counts its ties there).
int64_t reduce_backward_workspace(const ReduceShape& s, ReduceOp op);
void reduce_backward(const ReduceShape& s, ReduceOp op, const float* x, const float* y, const float* dy, float* dx, bool accumulate,
                     float* workspace);

}  // namespace edgegan::cpu
