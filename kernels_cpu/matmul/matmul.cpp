#include "kernels_cpu/matmul/matmul.h"

#include <vector>

#include "kernels_cpu/gemm/gemm.h"

namespace edgegan::cpu {
namespace {

// C[m×n] (strides cs) += A[m×k] (as) · B[k×n] (bs) on one matrix: the GEMM drivers
// when C's rows and A's or B's rows or columns are contiguous, else plain loops.
void product(int64_t m, int64_t n, int64_t k, const float* a, MatrixStrides as, const float* b, MatrixStrides bs, float* c,
             MatrixStrides cs) {
  if (cs.col == 1) {
    if (as.col == 1 && bs.col == 1) return gemm_accumulate(m, n, k, a, as.row, b, bs.row, c, cs.row);
    if (as.row == 1 && bs.col == 1) return gemm_accumulate_at(m, n, k, a, as.col, b, bs.row, c, cs.row);
    if (as.col == 1 && bs.row == 1) return gemm_accumulate_bt(m, n, k, a, as.row, b, bs.col, c, cs.row);
  }
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) {
      const float av = a[i * as.row + p * as.col];
      for (int64_t j = 0; j < n; ++j) c[i * cs.row + j * cs.col] += av * b[p * bs.row + j * bs.col];
    }
}

void zero(float* c, int64_t m, int64_t n, MatrixStrides cs) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) c[i * cs.row + j * cs.col] = 0.f;
}

}  // namespace

void matmul_reference(const MatMulShape& s, const float* a, const float* b, float* y) {
  for (int64_t b0 = 0; b0 < s.batch[0]; ++b0)
    for (int64_t b1 = 0; b1 < s.batch[1]; ++b1) {
      const float* pa = a + b0 * s.a.batch[0] + b1 * s.a.batch[1];
      const float* pb = b + b0 * s.b.batch[0] + b1 * s.b.batch[1];
      float* py = y + b0 * s.y.batch[0] + b1 * s.y.batch[1];
      for (int64_t i = 0; i < s.m; ++i)
        for (int64_t j = 0; j < s.n; ++j) {
          double sum = 0;
          for (int64_t p = 0; p < s.k; ++p) sum += static_cast<double>(pa[i * s.a.row + p * s.a.col]) * pb[p * s.b.row + j * s.b.col];
          py[i * s.y.row + j * s.y.col] = static_cast<float>(sum);
        }
    }
}

void matmul(const MatMulShape& s, const float* a, const float* b, float* y, int threads) {
  const int64_t matrices = s.batch[0] * s.batch[1];
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && matrices > 1)
  for (int64_t t = 0; t < matrices; ++t) {
    const int64_t b0 = t / s.batch[1], b1 = t % s.batch[1];
    float* py = y + b0 * s.y.batch[0] + b1 * s.y.batch[1];
    zero(py, s.m, s.n, s.y);
    product(s.m, s.n, s.k, a + b0 * s.a.batch[0] + b1 * s.a.batch[1], s.a, b + b0 * s.b.batch[0] + b1 * s.b.batch[1], s.b, py, s.y);
  }
}

void matmul_backward(const MatMulShape& s, int which, const float* a, const float* b, const float* dy, float* d, bool accumulate, int threads) {
  const MatrixStrides& ds = which == 0 ? s.a : s.b;
  // The operand's own matrices, each the sum over the batch entries that read it (in
  // increasing order): da[m×k] = dy[m×n] · bᵀ, db[k×n] = aᵀ · dy.
  const int64_t n0 = ds.batch[0] == 0 ? 1 : s.batch[0], n1 = ds.batch[1] == 0 ? 1 : s.batch[1];
  const MatrixStrides bt{{0, 0}, s.b.col, s.b.row}, at{{0, 0}, s.a.col, s.a.row};
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && n0 * n1 > 1)
  for (int64_t t = 0; t < n0 * n1; ++t) {
    const int64_t d0 = t / n1, d1 = t % n1;
    float* pd = d + d0 * ds.batch[0] + d1 * ds.batch[1];
    const int64_t rows = which == 0 ? s.m : s.k, cols = which == 0 ? s.k : s.n;
    if (!accumulate) zero(pd, rows, cols, ds);
    for (int64_t b0 = 0; b0 < s.batch[0]; ++b0) {
      if (ds.batch[0] != 0 && b0 != d0) continue;
      for (int64_t b1 = 0; b1 < s.batch[1]; ++b1) {
        if (ds.batch[1] != 0 && b1 != d1) continue;
        const float* pa = a + b0 * s.a.batch[0] + b1 * s.a.batch[1];
        const float* pb = b + b0 * s.b.batch[0] + b1 * s.b.batch[1];
        const float* py = dy + b0 * s.y.batch[0] + b1 * s.y.batch[1];
        if (which == 0) product(s.m, s.k, s.n, py, s.y, pb, bt, pd, ds);
        else product(s.k, s.n, s.m, pa, at, py, s.y, pd, ds);
      }
    }
  }
}

}  // namespace edgegan::cpu
