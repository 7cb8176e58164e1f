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

// Visits a product in panels of at most kPanelM x kPanelK x kPanelN.
template <typename Block>
void for_each_panel(int64_t m, int64_t n, int64_t k, Block block) {
  for (int64_t m0 = 0; m0 < m; m0 += kPanelM)
    for (int64_t k0 = 0; k0 < k; k0 += kPanelK)
      for (int64_t n0 = 0; n0 < n; n0 += kPanelN)
        block(m0, std::min(kPanelM, m - m0), k0, std::min(kPanelK, k - k0), n0, std::min(kPanelN, n - n0));
}

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Stride = Eigen::OuterStride<>;
using ConstMap = Eigen::Map<const RowMajor, 0, Stride>;
using Map = Eigen::Map<RowMajor, 0, Stride>;

}  // namespace

void gemm_accumulate(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                     int64_t ldc) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  for_each_panel(m, n, k, [&](int64_t m0, int64_t mm, int64_t k0, int64_t kk, int64_t n0, int64_t nn) {
    ConstMap A(a + m0 * lda + k0, mm, kk, Stride(lda));
    ConstMap B(b + k0 * ldb + n0, kk, nn, Stride(ldb));
    Map C(c + m0 * ldc + n0, mm, nn, Stride(ldc));
    if (mm == 1) {
      C.row(0).noalias() += A.row(0) * B;  // one output pixel: a vector-matrix product
    } else {
      C.noalias() += A * B;
    }
  });
}

// The transposed variants hand Eigen transposed views of the same panels.
void gemm_accumulate_at(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                        int64_t ldc) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  for_each_panel(m, n, k, [&](int64_t m0, int64_t mm, int64_t k0, int64_t kk, int64_t n0, int64_t nn) {
    ConstMap A(a + k0 * lda + m0, kk, mm, Stride(lda));
    ConstMap B(b + k0 * ldb + n0, kk, nn, Stride(ldb));
    Map C(c + m0 * ldc + n0, mm, nn, Stride(ldc));
    C.noalias() += A.transpose() * B;
  });
}

void gemm_accumulate_bt(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                        int64_t ldc) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  for_each_panel(m, n, k, [&](int64_t m0, int64_t mm, int64_t k0, int64_t kk, int64_t n0, int64_t nn) {
    ConstMap A(a + m0 * lda + k0, mm, kk, Stride(lda));
    ConstMap B(b + n0 * ldb + k0, nn, kk, Stride(ldb));
    Map C(c + m0 * ldc + n0, mm, nn, Stride(ldc));
    C.noalias() += A * B.transpose();
  });
}

}  // namespace edgegan::cpu
