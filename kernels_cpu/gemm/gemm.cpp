#include "kernels_cpu/gemm/gemm.h"

#include <algorithm>
#include <array>
#include <type_traits>

#include "kernels_cpu/gemm/gemm_ukernel.h"

namespace edgegan::cpu {
namespace {

// Cache blocking: a kBlockK-deep slice of one B column panel (256 x 32 floats =
// 32 KiB) stays in L1 while every row tile of a kBlockM-row block of A (64 KiB,
// L2) passes over it.
constexpr int64_t kBlockM = 64, kBlockK = 256;
constexpr int kMaxMr = 8, kMaxNr = 32;  // the widest family's tile

// One register tile of an indirect product: columns [n0, n0 + nr) of the C rows.
// B is float, or IEEE halves (fp16 weights).
template <typename BT, typename AT>
void run_tile(const GemmUkernel& uk, int mr, int nr, int64_t k, const AT* const* a_rows, const BT* b,
              int64_t ldb, float* const* c_rows, int64_t n0) {
  std::array<float*, kMaxMr> c;
  for (int i = 0; i < mr; ++i) c[static_cast<size_t>(i)] = c_rows[i] + n0;
  if constexpr (std::is_same_v<AT, uint16_t>) uk.run_f16(k, mr, nr, a_rows, b + n0, ldb, c.data());
  else if constexpr (std::is_same_v<BT, uint16_t>) uk.run_f16w(k, mr, nr, a_rows, b + n0, ldb, c.data());
  else uk.run(k, mr, nr, a_rows, b + n0, ldb, c.data());
}

template <typename BT, typename AT = float>
void rows_product(const GemmUkernel& uk, int64_t m, int64_t n, int64_t k, const AT* const* a_rows,
                  const BT* b, int64_t ldb, float* const* c_rows) {
  for (int64_t n0 = 0; n0 < n; n0 += uk.nr) {
    const int nr = static_cast<int>(std::min<int64_t>(uk.nr, n - n0));
    for (int64_t i0 = 0; i0 < m; i0 += uk.mr)
      run_tile(uk, static_cast<int>(std::min<int64_t>(uk.mr, m - i0)), nr, k, a_rows + i0, b, ldb, c_rows + i0, n0);
  }
}

// The family's fused store applies the epilogue's activation.
bool store_fuses(const GemmUkernel& uk, const Epilogue& ep) {
  return uk.run_store != nullptr &&
         (ep.activation == Activation::kNone || ep.activation == Activation::kRelu || ep.activation == Activation::kLeakyRelu);
}

// The fused store over the same register tiles as rows_product: each tile's partial
// sums (c_rows) plus its product go to out_rows with the epilogue, its bias shifted to
// the tile's first column. Families without it, or an activation it does not apply,
// take the same steps in passes: the partial sums copied to out_rows, the product
// accumulated onto them, then bias and activation in place.
void rows_store(const GemmUkernel& uk, int64_t m, int64_t n, int64_t k, const float* const* a_rows, const float* b,
                int64_t ldb, const float* const* c_rows, float* const* out_rows, const Epilogue& ep) {
  if (!store_fuses(uk, ep)) {
    for (int64_t i = 0; i < m; ++i)
      if (out_rows[i] != c_rows[i]) std::copy(c_rows[i], c_rows[i] + n, out_rows[i]);
    rows_product(uk, m, n, k, a_rows, b, ldb, out_rows);
    if (ep.bias || ep.activation != Activation::kNone)
      for (int64_t i = 0; i < m; ++i) store_with_epilogue(out_rows[i], 1, n, out_rows + i, ep.bias, ep.activation, ep.alpha, ep.beta, ep.slope);
    return;
  }
  std::array<const float*, kMaxMr> c;
  std::array<float*, kMaxMr> out;
  for (int64_t n0 = 0; n0 < n; n0 += uk.nr) {
    const int nr = static_cast<int>(std::min<int64_t>(uk.nr, n - n0));
    const Epilogue tile_ep = ep.from_column(n0);
    for (int64_t i0 = 0; i0 < m; i0 += uk.mr) {
      const int mr = static_cast<int>(std::min<int64_t>(uk.mr, m - i0));
      for (int i = 0; i < mr; ++i) {
        c[static_cast<size_t>(i)] = c_rows[i0 + i] + n0;
        out[static_cast<size_t>(i)] = out_rows[i0 + i] + n0;
      }
      uk.run_store(k, mr, nr, a_rows + i0, b + n0, ldb, c.data(), out.data(), tile_ep);
    }
  }
}

// C[mm×n] += A[mm×kk] · B[kk×n] for one cache block (mm <= kBlockM), A and C
// given by base and leading dimension: the indirect product over its row pointers.
void block_product(const GemmUkernel& uk, int64_t mm, int64_t n, int64_t kk, const float* a, int64_t lda,
                   const float* b, int64_t ldb, float* c, int64_t ldc) {
  std::array<const float*, kBlockM> a_rows;
  std::array<float*, kBlockM> c_rows;
  for (int64_t i = 0; i < mm; ++i) {
    a_rows[static_cast<size_t>(i)] = a + i * lda;
    c_rows[static_cast<size_t>(i)] = c + i * ldc;
  }
  rows_product(uk, mm, n, kk, a_rows.data(), b, ldb, c_rows.data());
}

}  // namespace

void gemm_accumulate(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                     int64_t ldc) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  const GemmUkernel& uk = gemm_ukernel();
  for (int64_t m0 = 0; m0 < m; m0 += kBlockM)
    for (int64_t k0 = 0; k0 < k; k0 += kBlockK)
      block_product(uk, std::min(kBlockM, m - m0), n, std::min(kBlockK, k - k0), a + m0 * lda + k0, lda, b + k0 * ldb, ldb,
                    c + m0 * ldc, ldc);
}

void gemm_accumulate_rows(int64_t m, int64_t n, int64_t k, const float* const* a_rows, const float* b, int64_t ldb,
                          float* const* c_rows) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  rows_product(gemm_ukernel(), m, n, k, a_rows, b, ldb, c_rows);
}

void gemm_accumulate_rows_f16w(int64_t m, int64_t n, int64_t k, const float* const* a_rows, const uint16_t* b, int64_t ldb,
                               float* const* c_rows) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  rows_product(gemm_ukernel(), m, n, k, a_rows, b, ldb, c_rows);
}

bool gemm_f16_available() { return gemm_ukernel().run_f16 != nullptr; }

void gemm_accumulate_rows_f16(int64_t m, int64_t n, int64_t k, const uint16_t* const* a_rows, const uint16_t* b, int64_t ldb,
                              float* const* c_rows) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  rows_product(gemm_ukernel(), m, n, k, a_rows, b, ldb, c_rows);
}

bool gemm_store_applies(const Epilogue& ep) { return store_fuses(gemm_ukernel(), ep); }

void gemm_store_rows(int64_t m, int64_t n, int64_t k, const float* const* a_rows, const float* b, int64_t ldb,
                     const float* const* c_rows, float* const* out_rows, const Epilogue& ep) {
  if (m <= 0 || n <= 0) return;
  rows_store(gemm_ukernel(), m, n, k, a_rows, b, ldb, c_rows, out_rows, ep);
}

void gemm_accumulate_at(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                        int64_t ldc) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  const GemmUkernel& uk = gemm_ukernel();
  constexpr int64_t kBlockMt = 32;  // smaller row block: it is packed on the stack
  std::array<float, kBlockMt * kBlockK> packed;  // A block transposed: [row][p]
  for (int64_t m0 = 0; m0 < m; m0 += kBlockMt) {
    const int64_t mm = std::min(kBlockMt, m - m0);
    for (int64_t k0 = 0; k0 < k; k0 += kBlockK) {
      const int64_t kk = std::min(kBlockK, k - k0);
      transpose_matrix(kk, mm, a + k0 * lda + m0, lda, packed.data(), kk);
      block_product(uk, mm, n, kk, packed.data(), kk, b + k0 * ldb, ldb, c + m0 * ldc, ldc);
    }
  }
}

void gemm_accumulate_bt(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                        int64_t ldc) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  const GemmUkernel& uk = gemm_ukernel();
  std::array<float, kBlockK * kMaxNr> packed;  // one B panel transposed: [p][column]
  for (int64_t k0 = 0; k0 < k; k0 += kBlockK) {
    const int64_t kk = std::min(kBlockK, k - k0);
    for (int64_t n0 = 0; n0 < n; n0 += uk.nr) {
      const int64_t nn = std::min<int64_t>(uk.nr, n - n0);
      for (int64_t j = 0; j < nn; ++j) {
        const float* src = b + (n0 + j) * ldb + k0;
        for (int64_t p = 0; p < kk; ++p) packed[static_cast<size_t>(p * nn + j)] = src[p];
      }
      for (int64_t m0 = 0; m0 < m; m0 += kBlockM)
        block_product(uk, std::min(kBlockM, m - m0), nn, kk, a + m0 * lda + k0, lda, packed.data(), nn, c + m0 * ldc + n0, ldc);
    }
  }
}

}  // namespace edgegan::cpu
