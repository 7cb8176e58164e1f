#include "kernels_cpu/gemm.h"

#include <algorithm>

#include <Eigen/Core>

namespace edgegan::cpu {
namespace {

// Eigen packs the operands of a product into blocks sized from the cache sizes it
// detects; on a large-L3 machine a wide product (col2im's N = k*k*Cout) gets packing
// buffers of tens of MB per thread, on the heap, invisible to the memory plan. Handing
// it panels of at most kPanelM x kPanelK x kPanelN keeps both packing blocks within
// Eigen's stack-allocation limit (EIGEN_STACK_ALLOCATION_LIMIT, 128 KiB): no hidden
// heap (so no allocation that could fail inside an OpenMP region), and a bounded,
// reused amount of stack per thread.
constexpr int64_t kPanelM = 128, kPanelK = 256, kPanelN = 128;

}  // namespace

void gemm_accumulate(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                     int64_t ldc) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Stride = Eigen::OuterStride<>;
  for (int64_t m0 = 0; m0 < m; m0 += kPanelM) {
    const int64_t mm = std::min(kPanelM, m - m0);
    for (int64_t k0 = 0; k0 < k; k0 += kPanelK) {
      const int64_t kk = std::min(kPanelK, k - k0);
      for (int64_t n0 = 0; n0 < n; n0 += kPanelN) {
        const int64_t nn = std::min(kPanelN, n - n0);
        Eigen::Map<const RowMajor, 0, Stride> A(a + m0 * lda + k0, mm, kk, Stride(lda));
        Eigen::Map<const RowMajor, 0, Stride> B(b + k0 * ldb + n0, kk, nn, Stride(ldb));
        Eigen::Map<RowMajor, 0, Stride> C(c + m0 * ldc + n0, mm, nn, Stride(ldc));
        if (mm == 1) {
          C.row(0).noalias() += A.row(0) * B;  // one output pixel: a vector-matrix product
        } else {
          C.noalias() += A * B;
        }
      }
    }
  }
}

// The transposed variants panel like gemm_accumulate (same reasons) and hand Eigen
// transposed views.
void gemm_accumulate_at(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                        int64_t ldc) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Stride = Eigen::OuterStride<>;
  for (int64_t m0 = 0; m0 < m; m0 += kPanelM) {
    const int64_t mm = std::min(kPanelM, m - m0);
    for (int64_t k0 = 0; k0 < k; k0 += kPanelK) {
      const int64_t kk = std::min(kPanelK, k - k0);
      for (int64_t n0 = 0; n0 < n; n0 += kPanelN) {
        const int64_t nn = std::min(kPanelN, n - n0);
        Eigen::Map<const RowMajor, 0, Stride> A(a + k0 * lda + m0, kk, mm, Stride(lda));
        Eigen::Map<const RowMajor, 0, Stride> B(b + k0 * ldb + n0, kk, nn, Stride(ldb));
        Eigen::Map<RowMajor, 0, Stride> C(c + m0 * ldc + n0, mm, nn, Stride(ldc));
        C.noalias() += A.transpose() * B;
      }
    }
  }
}

void gemm_accumulate_bt(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                        int64_t ldc) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Stride = Eigen::OuterStride<>;
  for (int64_t m0 = 0; m0 < m; m0 += kPanelM) {
    const int64_t mm = std::min(kPanelM, m - m0);
    for (int64_t k0 = 0; k0 < k; k0 += kPanelK) {
      const int64_t kk = std::min(kPanelK, k - k0);
      for (int64_t n0 = 0; n0 < n; n0 += kPanelN) {
        const int64_t nn = std::min(kPanelN, n - n0);
        Eigen::Map<const RowMajor, 0, Stride> A(a + m0 * lda + k0, mm, kk, Stride(lda));
        Eigen::Map<const RowMajor, 0, Stride> B(b + n0 * ldb + k0, nn, kk, Stride(ldb));
        Eigen::Map<RowMajor, 0, Stride> C(c + m0 * ldc + n0, mm, nn, Stride(ldc));
        C.noalias() += A * B.transpose();
      }
    }
  }
}

}  // namespace edgegan::cpu
