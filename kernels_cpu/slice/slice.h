// A strided slice along one axis of a row-major tensor viewed as [outer][length][inner]:
// y[o][j][i] = x[o][start + j*step][i] for j < count (step may be negative). Split,
// channel halves (torch.chunk) and crops are one such slice each.
#pragma once

#include <cstdint>

#include "kernels_common/slice_shape.h"

namespace edgegan::cpu {

// Plain loops, for tests.
void slice_reference(const SliceShape& s, const float* x, float* y);
// Contiguous runs of `inner` floats per row, parallel over outer × count rows.
void slice(const SliceShape& s, const float* x, float* y, int threads);
// dx from dy: `accumulate` adds dy into the kept rows of dx (another reader wrote
// dx first); otherwise dx is overwritten (zeros in the rows the slice dropped).
void slice_backward(const SliceShape& s, const float* dy, float* dx, bool accumulate, int threads);

}  // namespace edgegan::cpu
