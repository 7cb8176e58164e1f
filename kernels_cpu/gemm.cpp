#include "kernels_cpu/gemm.h"

#include <Eigen/Core>

namespace edgegan::cpu {

void gemm_accumulate(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                     const float* b, int64_t ldb, float* c, int64_t ldc) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Stride = Eigen::OuterStride<>;
  Eigen::Map<const RowMajor, 0, Stride> A(a, m, k, Stride(lda));
  Eigen::Map<const RowMajor, 0, Stride> B(b, k, n, Stride(ldb));
  Eigen::Map<RowMajor, 0, Stride> C(c, m, n, Stride(ldc));
  if (m == 1) {
    // A single output pixel: a vector-matrix product, no GEMM packing overhead.
    C.row(0).noalias() += A.row(0) * B;
  } else {
    C.noalias() += A * B;
  }
}

}  // namespace edgegan::cpu
