// C[m×n] += A[m×k] · B[k×n], all row-major with leading dimensions (elements
// between consecutive rows). Leading dimensions larger than the row width let
// callers read strided input pixels and write phase-strided output pixels
// directly. Each call runs on the calling thread (callers parallelise over
// their own tasks) and its result does not depend on the thread count.
//
// The three drivers block the product for the caches and hand register tiles
// to the active micro-kernel (gemm_ukernel.h); the transposed variants pack
// the transposed operand one cache block at a time into a stack buffer.
#pragma once

#include <cstdint>

#include "kernels_common/transpose_matrix.h"

#include "kernels_cpu/common/epilogue.h"

namespace edgegan::cpu {

void gemm_accumulate(int64_t m, int64_t n, int64_t k,
                     const float* a, int64_t lda,
                     const float* b, int64_t ldb,
                     float* c, int64_t ldc);

// The indirect form the others reduce to: row i of A is a_rows[i] (k contiguous
// floats) and row i of C is c_rows[i] (n floats), so callers can gather pixels
// that are not evenly spaced (the valid pixels of a split transposed-convolution tap) and
// write them to strided output positions. B is [k×n] with leading dimension ldb.
void gemm_accumulate_rows(int64_t m, int64_t n, int64_t k, const float* const* a_rows, const float* b, int64_t ldb,
                          float* const* c_rows);
// The same with B in IEEE half precision (fp16 weights; widened in registers).
void gemm_accumulate_rows_f16w(int64_t m, int64_t n, int64_t k, const float* const* a_rows, const uint16_t* b, int64_t ldb,
                               float* const* c_rows);
// The same with A and B in half precision, in half arithmetic (GemmUkernel::run_f16):
// only where gemm_f16_available() (neonfp16arith).
bool gemm_f16_available();
void gemm_accumulate_rows_f16(int64_t m, int64_t n, int64_t k, const uint16_t* const* a_rows, const uint16_t* b, int64_t ldb,
                              float* const* c_rows);

// The last product of an output tile with its store:
//   out_rows[i][j] = activation(c_rows[i][j] + (A · B)[i][j] + bias[j]).
// Where gemm_store_applies(ep) (the active family has the fused store, GemmStoreFn in
// gemm_ukernel.h, and it applies the activation: kNone, kRelu, kLeakyRelu), fused:
// the sum a chain from c_rows, written from registers. out_rows may then be c_rows
// (with a plain Epilogue{}: the sums only, for store_with_epilogue to finish, bit for
// bit as the fused store would). Elsewhere in passes (c_rows copied to out_rows, the
// product accumulated, then the epilogue), the sums rounding as gemm_accumulate_rows'.
// ep.bias points at column 0 (or is nullptr). Float B only.
bool gemm_store_applies(const Epilogue& ep);
void gemm_store_rows(int64_t m, int64_t n, int64_t k, const float* const* a_rows, const float* b, int64_t ldb,
                     const float* const* c_rows, float* const* out_rows, const Epilogue& ep);

// C[m×n] += A[k×m]ᵀ · B[k×n]: A is read as k rows of m (the weight gradient:
// inputᵀ · output gradient, reduced over pixels).
void gemm_accumulate_at(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                        int64_t ldc);

// C[m×n] += A[m×k] · B[n×k]ᵀ: B is read as n rows of k (the input gradient:
// output gradient · weightsᵀ).
void gemm_accumulate_bt(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                        int64_t ldc);

}  // namespace edgegan::cpu
