// AVX-512 narrow-output kernel: 4 pixels x up to 4 output channels = 16 zmm
// accumulators, each summing 16 reduction positions per step; one horizontal
// reduction per tile at the very end, after every tap (see gemm_ukernel.h).
// Compiled with -mavx512f -mfma; shares nothing inline with other files.
#include <immintrin.h>

#include "kernels_cpu/dot/dot_ukernel.h"

namespace edgegan::cpu {
namespace {

// Sums each of v0..v3 across its 16 lanes: returns {sum v0, sum v1, sum v2, sum v3}.
inline __m128 reduce4(__m512 v0, __m512 v1, __m512 v2, __m512 v3) {
  const __m512 a = _mm512_add_ps(_mm512_unpacklo_ps(v0, v1), _mm512_unpackhi_ps(v0, v1));  // per 128-bit block: v0 v1 v0 v1
  const __m512 b = _mm512_add_ps(_mm512_unpacklo_ps(v2, v3), _mm512_unpackhi_ps(v2, v3));  // v2 v3 v2 v3
  const __m512 c = _mm512_add_ps(_mm512_shuffle_ps(a, b, 0x44), _mm512_shuffle_ps(a, b, 0xEE));  // v0 v1 v2 v3 per block
  const __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(c), 1));  // AVX-512F only (no DQ)
  const __m256 d = _mm256_add_ps(_mm512_castps512_ps256(c), hi);
  return _mm_add_ps(_mm256_castps256_ps128(d), _mm256_extractf128_ps(d, 1));
}

// MR and NR are compile-time so the accumulators stay in registers. Rows start row0
// floats past each tap's pointer. (Unmasked loads where k % 16 == 0 measured 5-10%
// slower, so every load keeps the mask.)
template <int MR, int NR>
void tile(int64_t k, int taps, const float* const* a, int64_t row0, int64_t lda, const float* const* bt, float* c, int64_t ldc) {
  __m512 acc[MR][4];
#pragma GCC unroll 4
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) acc[i][j] = _mm512_setzero_ps();
  const __mmask16 tail = static_cast<__mmask16>((1u << (k % 16)) - 1);
  for (int t = 0; t < taps; ++t) {
    const float* at = a[t] + row0;
    const float* b = bt[t];
    for (int64_t p = 0; p < k; p += 16) {
      const __mmask16 m = p + 16 <= k ? __mmask16(0xFFFF) : tail;
      __m512 av[MR];
#pragma GCC unroll 4
      for (int i = 0; i < MR; ++i) av[i] = _mm512_maskz_loadu_ps(m, at + i * lda + p);
#pragma GCC unroll 4
      for (int j = 0; j < NR; ++j) {
        const __m512 bv = _mm512_maskz_loadu_ps(m, b + j * k + p);
#pragma GCC unroll 4
        for (int i = 0; i < MR; ++i) acc[i][j] = _mm512_fmadd_ps(av[i], bv, acc[i][j]);
      }
    }
  }
#pragma GCC unroll 4
  for (int i = 0; i < MR; ++i) {
    alignas(16) float sums[4];
    _mm_store_ps(sums, reduce4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]));
    for (int j = 0; j < NR; ++j) c[i * ldc + j] += sums[j];
  }
}

template <int MR>
void tile_nr(int64_t k, int taps, int nr, const float* const* a, int64_t row0, int64_t lda, const float* const* bt, float* c,
             int64_t ldc) {
  switch (nr) {
    case 1: return tile<MR, 1>(k, taps, a, row0, lda, bt, c, ldc);
    case 2: return tile<MR, 2>(k, taps, a, row0, lda, bt, c, ldc);
    case 3: return tile<MR, 3>(k, taps, a, row0, lda, bt, c, ldc);
    default: return tile<MR, 4>(k, taps, a, row0, lda, bt, c, ldc);
  }
}

// All mr rows, four at a time: one call per run of consecutive pixels, not per tile.
void rows(int64_t k, int taps, int mr, int nr, const float* const* a, int64_t lda, const float* const* bt, float* c, int64_t ldc) {
  int i0 = 0;
  for (; i0 + 4 <= mr; i0 += 4) tile_nr<4>(k, taps, nr, a, i0 * lda, lda, bt, c + i0 * ldc, ldc);
  switch (mr - i0) {
    case 1: return tile_nr<1>(k, taps, nr, a, i0 * lda, lda, bt, c + i0 * ldc, ldc);
    case 2: return tile_nr<2>(k, taps, nr, a, i0 * lda, lda, bt, c + i0 * ldc, ldc);
    case 3: return tile_nr<3>(k, taps, nr, a, i0 * lda, lda, bt, c + i0 * ldc, ldc);
    default: return;
  }
}

}  // namespace

void dot_ukernel_4x4__avx512(int64_t k, int taps, int mr, int nr, const float* const* a, int64_t lda,
                             const float* const* bt, float* c, int64_t ldc) {
  rows(k, taps, mr, nr, a, lda, bt, c, ldc);
}

}  // namespace edgegan::cpu
