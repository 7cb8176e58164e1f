// The shape of a batched matrix product y[b, m, n] = sum_k a[b, m, k] * b[b, k, n] of
// run-time tensors (ONNX MatMul), with every operand read through strides: rank-4
// tensors are stored NHWC, so a logical [N, H, M, K] operand has its matrices strided,
// and a batch dim of size 1 broadcasts (stride 0). Both backends' kernels take it.
#pragma once

#include <cstdint>

namespace edgegan::kernels {

struct MatrixStrides {
  int64_t batch[2] = {0, 0};  // per batch dim (0: broadcast)
  int64_t row = 0, col = 0;
};

struct MatMulShape {
  int64_t batch[2] = {1, 1};  // the sample, and the second batch dim of rank-4 operands (1 for rank 3)
  int64_t m = 0, n = 0, k = 0;
  MatrixStrides a, b, y;      // a: rows m, cols k; b: rows k, cols n; y: rows m, cols n
};

// The strides of a logical [d0, d1, R, C] (rank 4, nhwc) or [d0, R, C] (rank 3, row-major)
// operand stored as this engine stores it; broadcast1: its dim 1 is 1 against the output's.
inline MatrixStrides matrix_strides(const int64_t* logical, int rank, bool nhwc) {
  MatrixStrides s;
  if (rank == 3) {
    s.row = logical[2], s.col = 1;
    s.batch[0] = logical[1] * logical[2];
    return s;
  }
  const int64_t d1 = logical[1], r = logical[2], c = logical[3];
  if (nhwc) {  // stored [d0, R, C, d1]
    s.batch[1] = 1, s.row = c * d1, s.col = d1;
  } else {
    s.batch[1] = r * c, s.row = c, s.col = 1;
  }
  s.batch[0] = d1 * r * c;
  if (d1 == 1) s.batch[1] = 0;
  return s;
}

}  // namespace edgegan::kernels

namespace edgegan::cpu {
using namespace kernels;
}  // namespace edgegan::cpu
