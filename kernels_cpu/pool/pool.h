// Average and max pooling of NHWC maps (ONNX AveragePool, MaxPool, GlobalAveragePool,
// GlobalMaxPool). Window taps of output o on one axis: i = o*stride - pad_begin +
// t*dilation, t in [0, kernel); taps outside [0, in) are padding: skipped by max,
// counted by an average with count_include_pad (as far as the padded input reaches,
// as PyTorch and ONNX Runtime do with ceil_mode).
#pragma once

#include <cstdint>

#include "kernels_common/pool_shape.h"

namespace edgegan::cpu {

// Plain loops over NHWC.
void pool_reference(const PoolShape& s, PoolKind kind, bool count_include_pad, const float* x, float* y);
// Vectorised over channels, parallel over batch x output rows.
void pool(const PoolShape& s, PoolKind kind, bool count_include_pad, const float* x, float* y, int threads);

// dx (overwritten) from dy. Average: each input gathers from the outputs whose
// windows cover it (fixed tap order). Max: the argmax of every window is recomputed
// from x (the first maximum in scan order, NaN wins, as PyTorch) and receives the
// output's gradient; parallel over batch x channel blocks, each block scanned in a
// fixed order: deterministic, no atomics.
void pool_backward(const PoolShape& s, PoolKind kind, bool count_include_pad, const float* x, const float* dy, float* dx, int threads);
void pool_backward_reference(const PoolShape& s, PoolKind kind, bool count_include_pad, const float* x, const float* dy, float* dx);

}  // namespace edgegan::cpu
