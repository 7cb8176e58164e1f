// MatMul: batched y[b, m, n] = sum_k a[b, m, k] * b[b, k, n] of run-time tensors read
// through strides (kernels_common/matmul_shape.h). The reference sums in double. The
// fast forward runs each (batch, batch) matrix on the GEMM drivers where the strides
// allow (rows or columns contiguous: plain, Aᵀ and Bᵀ forms, so attention's transposed
// operands need no copy) and a strided loop elsewhere; matrices are spread over threads,
// each summed in one fixed order. The backward: da = dy · bᵀ, db = aᵀ · dy, summed over
// the batch dims an operand was broadcast along.
#pragma once

#include <cstdint>

#include "kernels_common/matmul_shape.h"

namespace edgegan::cpu {

void matmul_reference(const MatMulShape& s, const float* a, const float* b, float* y);
void matmul(const MatMulShape& s, const float* a, const float* b, float* y, int threads);

// The gradient of operand `which` (0: a, 1: b), written through that operand's strides:
// overwrites it, or adds to it when `accumulate`. Deterministic.
void matmul_backward(const MatMulShape& s, int which, const float* a, const float* b, const float* dy, float* d, bool accumulate, int threads);

}  // namespace edgegan::cpu
