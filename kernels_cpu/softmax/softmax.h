// Softmax along one axis of a tensor viewed as [outer, axis, inner]:
// y = exp(x - max) / sum(exp(x - max)) over the axis. The reference works in double;
// the fast forward in float, rows of `inner` values at a time (the inner loops
// vectorise), outer slices on threads. The backward: dx = y * (dy - sum(dy * y)).
#pragma once

#include <cstdint>

#include "kernels_common/softmax_shape.h"

namespace edgegan::cpu {

void softmax_reference(const SoftmaxShape& s, const float* x, float* y);
void softmax(const SoftmaxShape& s, const float* x, float* y, int threads);

// dx from the forward's y and dy; overwrites dx, or adds to it when `accumulate`.
void softmax_backward(const SoftmaxShape& s, const float* y, const float* dy, float* dx, bool accumulate, int threads);

}  // namespace edgegan::cpu
