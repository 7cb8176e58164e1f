// Spatial padding of an NHWC map [N][H][W][C]: output row o reads input row
// o - pad_top (likewise columns). A negative pad crops that side first; the border is
// then filled from the cropped map by the mode (ONNX Pad, numpy.pad semantics):
// constant `value`, reflect (mirror without repeating the edge, periodic for wide
// pads), edge (the edge repeated) or wrap (the opposite side).
#pragma once

#include <cstdint>

#include "kernels_common/pad_shape.h"

namespace edgegan::cpu {

// Plain loops: every output element from pad_source.
void pad_reference(const PadShape& s, const float* x, float* y);

// Per output row: the interior as one contiguous copy, the border pixel by pixel;
// parallel over batch x output rows.
void pad(const PadShape& s, const float* x, float* y, int threads);

// dx[i] = sum of dy over the outputs that read input i (zero outside the cropped
// source). Each input row of dx is owned by one thread and sums its output rows in
// ascending order, pixels in ascending order: deterministic for any thread count.
// accumulate: add to dx instead of overwriting it.
void pad_backward(const PadShape& s, const float* dy, float* dx, bool accumulate, int threads);

}  // namespace edgegan::cpu
