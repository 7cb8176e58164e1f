// Element-wise y = a (op) b of two tensors with ONNX multidirectional broadcasting,
// over the tensors' storage dimensions (NHWC for images): every operand has the
// output's rank and, per dimension, either the output's size or 1.
//
// The fast forward collapses the shapes (dropping size-1 output dimensions and merging
// neighbours that broadcast alike), so the equal-shape residual add is one contiguous
// loop, a per-channel operand an inner loop over channels and a per-sample scalar a
// broadcast value; every other shape is the same strided loop over the collapsed rows.
// Its inner loops vectorise; rows (or chunks of one long row) are spread over threads.
//
// The backward gives each operand's gradient reduced (summed) over the dimensions it
// was broadcast along, in a fixed order whatever the thread count (no atomics).
#pragma once

#include <cstdint>

#include "kernels_common/binary_shape.h"

namespace edgegan::cpu {

// Plain loops over the output's multi-index: the definition.
void binary_reference(const BinaryShape& s, BinaryOp op, const float* a, const float* b, float* y);
// The fast forward; y may be a or b where that operand has the output's shape.
void binary(const BinaryShape& s, BinaryOp op, const float* a, const float* b, float* y, int threads);

// An fp16 session's forward: each operand halves (an arena tensor) or floats (a
// constant), y halves. The operands are widened in blocks, computed as binary() does
// (the same fp32 results) and narrowed, ties to even; y may be a or b as above. Returns
// whether a finite result became infinite (past the half range).
struct BinaryOperand {
  const void* data = nullptr;
  bool half = false;
};
// At neonfp16arith, Add, Sub and Mul of two half operands of the output's shape compute
// in half arithmetic (binary_row_halves__neonfp16arith): the same bits, no conversions.
bool binary_halves(const BinaryShape& s, BinaryOp op, const BinaryOperand& a, const BinaryOperand& b, uint16_t* y, int threads);
#if defined(EDGEGAN_HAVE_NEON_FP16_KERNELS)
// y[i] = a[i] op b[i] in halves (op Add, Sub or Mul; y may be a or b); returns whether a
// finite pair gave a result past the half range.
bool binary_row_halves__neonfp16arith(BinaryOp op, const uint16_t* a, const uint16_t* b, uint16_t* y, int64_t n);
#endif

// The gradient of operand `which` (0: a, 1: b) from dy: d = sum over the operand's
// broadcast dimensions of dy * dy/d(operand). a and b are the forward's operands (Mul
// and Div read them). The reference accumulates in double and overwrites d.
void binary_backward_reference(const BinaryShape& s, BinaryOp op, int which, const float* a, const float* b, const float* dy, float* d);
// The fast backward: overwrites d, or adds to it when `accumulate`. Deterministic.
void binary_backward(const BinaryShape& s, BinaryOp op, int which, const float* a, const float* b, const float* dy, float* d,
                     bool accumulate, int threads);

}  // namespace edgegan::cpu
