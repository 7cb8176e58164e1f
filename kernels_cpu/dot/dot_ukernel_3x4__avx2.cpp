// AVX2 narrow-output kernel (the RGB / grey heads, at most 4 output channels):
// 3 pixels x up to 4 channels = 12 ymm accumulators, each summing 8 reduction
// positions per step, plus the 3 pixels' input vectors: 15 of the 16 ymm
// registers (4 pixels would need 16 accumulators alone). B is an FMA memory
// operand. One horizontal reduction per tile at the very end, after every tap
// (see gemm_ukernel.h). The last k % 8 positions of each tap use masked loads.
// Compiled with -mavx2 -mfma; shares nothing inline with other files.
#include <immintrin.h>

#include "kernels_cpu/dot/dot_ukernel.h"

namespace edgegan::cpu {
namespace {

constexpr int kMr = 3;

// Sums each of v0..v3 across its 8 lanes: returns {sum v0, sum v1, sum v2, sum v3}.
inline __m128 reduce4(__m256 v0, __m256 v1, __m256 v2, __m256 v3) {
  const __m256 a = _mm256_hadd_ps(v0, v1);  // per 128-bit half: v0 v0 v1 v1 (pairs)
  const __m256 b = _mm256_hadd_ps(v2, v3);
  const __m256 c = _mm256_hadd_ps(a, b);  // per half: v0 v1 v2 v3
  return _mm_add_ps(_mm256_castps256_ps128(c), _mm256_extractf128_ps(c, 1));
}

// Lanes [0, n) of a 256-bit mask vector set (n < 8).
inline __m256i tail_mask(int64_t n) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), lane);
}

// MR and NR are compile-time so the accumulators stay in registers. Rows start row0
// floats past each tap's pointer.
template <int MR, int NR>
void tile(int64_t k, int taps, const float* const* a, int64_t row0, int64_t lda, const float* const* bt, float* c, int64_t ldc) {
  __m256 acc[MR][4];
#pragma GCC unroll 3
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) acc[i][j] = _mm256_setzero_ps();
  const int64_t k8 = k - k % 8;
  const __m256i tail = tail_mask(k % 8);
  for (int t = 0; t < taps; ++t) {
    const float* at = a[t] + row0;
    const float* b = bt[t];
    for (int64_t p = 0; p < k8; p += 8) {
      __m256 av[MR];
#pragma GCC unroll 3
      for (int i = 0; i < MR; ++i) av[i] = _mm256_loadu_ps(at + i * lda + p);
#pragma GCC unroll 4
      for (int j = 0; j < NR; ++j) {
        const __m256 bv = _mm256_loadu_ps(b + j * k + p);
#pragma GCC unroll 3
        for (int i = 0; i < MR; ++i) acc[i][j] = _mm256_fmadd_ps(av[i], bv, acc[i][j]);
      }
    }
    if (k8 < k) {  // masked lanes load as zero: no read past a row or a tap's weights
      __m256 av[MR];
#pragma GCC unroll 3
      for (int i = 0; i < MR; ++i) av[i] = _mm256_maskload_ps(at + i * lda + k8, tail);
#pragma GCC unroll 4
      for (int j = 0; j < NR; ++j) {
        const __m256 bv = _mm256_maskload_ps(b + j * k + k8, tail);
#pragma GCC unroll 3
        for (int i = 0; i < MR; ++i) acc[i][j] = _mm256_fmadd_ps(av[i], bv, acc[i][j]);
      }
    }
  }
#pragma GCC unroll 3
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

}  // namespace

// All mr rows, three at a time: one call per run of consecutive pixels, not per tile.
void dot_ukernel_3x4__avx2(int64_t k, int taps, int mr, int nr, const float* const* a, int64_t lda, const float* const* bt,
                           float* c, int64_t ldc) {
  int i0 = 0;
  for (; i0 + kMr <= mr; i0 += kMr) tile_nr<kMr>(k, taps, nr, a, i0 * lda, lda, bt, c + i0 * ldc, ldc);
  switch (mr - i0) {
    case 1: return tile_nr<1>(k, taps, nr, a, i0 * lda, lda, bt, c + i0 * ldc, ldc);
    case 2: return tile_nr<2>(k, taps, nr, a, i0 * lda, lda, bt, c + i0 * ldc, ldc);
    default: return;
  }
}

}  // namespace edgegan::cpu
