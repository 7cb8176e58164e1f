// AVX2 + FMA micro-kernel: 6 rows x 16 columns = 12 ymm accumulators, 2 ymm of
// B per step and one broadcast per row, leaving 2 of the 16 registers spare.
// fp16 weights (B as IEEE halves) are widened in registers with F16C's VCVTPH2PS
// (every AVX2 CPU has F16C; the dispatcher checks it too).
// Compiled with -mavx2 -mfma -mf16c; includes nothing with inline functions that
// other files share, so no AVX instruction can leak into code a baseline CPU runs.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels_cpu/gemm/gemm_ukernel.h"

namespace edgegan::cpu {
namespace {

// Lane masks for the last, partial 8-column half: kMasks + 8 - n has n lanes set.
alignas(32) const int32_t kMaskTable[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
inline __m256i lane_mask(int n) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kMaskTable + 8 - n));
}

// Eight columns of B starting at bp: all of them, or the first n (others zero).
inline __m256 load8(const float* bp) { return _mm256_loadu_ps(bp); }
inline __m256 load8(const uint16_t* bp) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bp))); }
inline __m256 load8_first(const float* bp, int n) { return _mm256_maskload_ps(bp, lane_mask(n)); }
inline __m256 load8_first(const uint16_t* bp, int n) {
  alignas(16) uint16_t staged[8] = {};  // no masked 16-bit load in AVX2: stage the valid halves
  std::memcpy(staged, bp, static_cast<size_t>(n) * sizeof(uint16_t));
  return _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(staged)));
}

// Weight streaming (a tiny map with a huge [Cin][Cout]: B used by one or a few row
// tiles, so it comes from L3 or memory): deep products, and tiles of one or two
// rows, prefetch kPrefetchBytes ahead along B, as the AVX-512 family does (see the
// measurements there). Rows of a converter panel are 128 bytes, of which a 16-column
// tile reads one line.
constexpr int64_t kPrefetchBytes = 8192, kPrefetchMinRows = 8;
constexpr int64_t kPrefetchMinK = 512;  // elements

template <int MR, bool kPrefetch, typename BT>
void tile(int64_t k, int nr, const float* const* a, const BT* b, int64_t ldb, float* const* c) {
  __m256 acc0[MR], acc1[MR];
#pragma GCC unroll 6
  for (int i = 0; i < MR; ++i) acc0[i] = acc1[i] = _mm256_setzero_ps();
  const int64_t prefetch_ahead = kPrefetch ? std::max(kPrefetchMinRows, kPrefetchBytes / (ldb * static_cast<int64_t>(sizeof(BT)))) * ldb : 0;
  if (nr == 16) {
    for (int64_t p = 0; p < k; ++p) {
      if constexpr (kPrefetch) _mm_prefetch(reinterpret_cast<const char*>(b + p * ldb + prefetch_ahead), _MM_HINT_T0);
      const __m256 b0 = load8(b + p * ldb), b1 = load8(b + p * ldb + 8);
#pragma GCC unroll 6
      for (int i = 0; i < MR; ++i) {
        const __m256 av = _mm256_broadcast_ss(a[i] + p);
        acc0[i] = _mm256_fmadd_ps(av, b0, acc0[i]);
        acc1[i] = _mm256_fmadd_ps(av, b1, acc1[i]);
      }
    }
  } else if (nr > 8) {
    for (int64_t p = 0; p < k; ++p) {
      const __m256 b0 = load8(b + p * ldb), b1 = load8_first(b + p * ldb + 8, nr - 8);
#pragma GCC unroll 6
      for (int i = 0; i < MR; ++i) {
        const __m256 av = _mm256_broadcast_ss(a[i] + p);
        acc0[i] = _mm256_fmadd_ps(av, b0, acc0[i]);
        acc1[i] = _mm256_fmadd_ps(av, b1, acc1[i]);
      }
    }
  } else {  // at most 8 columns: one half only
    for (int64_t p = 0; p < k; ++p) {
      const __m256 b0 = load8_first(b + p * ldb, nr);
#pragma GCC unroll 6
      for (int i = 0; i < MR; ++i) acc0[i] = _mm256_fmadd_ps(_mm256_broadcast_ss(a[i] + p), b0, acc0[i]);
    }
  }
  const __m256i m0 = lane_mask(nr >= 8 ? 8 : nr), m1 = lane_mask(nr >= 16 ? 8 : (nr > 8 ? nr - 8 : 0));
#pragma GCC unroll 6
  for (int i = 0; i < MR; ++i) {
    _mm256_maskstore_ps(c[i], m0, _mm256_add_ps(_mm256_maskload_ps(c[i], m0), acc0[i]));
    if (nr > 8) _mm256_maskstore_ps(c[i] + 8, m1, _mm256_add_ps(_mm256_maskload_ps(c[i] + 8, m1), acc1[i]));
  }
}

template <int MR, typename BT>
void tile_any(int64_t k, int nr, const float* const* a, const BT* b, int64_t ldb, float* const* c) {
  const bool streaming = (k >= kPrefetchMinK || MR <= 2) && ldb > 0 && nr == 16;
  if (streaming) tile<MR, true>(k, nr, a, b, ldb, c);
  else tile<MR, false>(k, nr, a, b, ldb, c);
}

template <typename BT>
void kernel(int64_t k, int mr, int nr, const float* const* a, const BT* b, int64_t ldb, float* const* c) {
  switch (mr) {
    case 1: return tile_any<1>(k, nr, a, b, ldb, c);
    case 2: return tile_any<2>(k, nr, a, b, ldb, c);
    case 3: return tile_any<3>(k, nr, a, b, ldb, c);
    case 4: return tile_any<4>(k, nr, a, b, ldb, c);
    case 5: return tile_any<5>(k, nr, a, b, ldb, c);
    default: return tile_any<6>(k, nr, a, b, ldb, c);
  }
}

}  // namespace

void gemm_ukernel_6x16__avx2(int64_t k, int mr, int nr, const float* const* a, const float* b, int64_t ldb,
                             float* const* c) {
  kernel(k, mr, nr, a, b, ldb, c);
}

void gemm_ukernel_6x16__avx2_f16w(int64_t k, int mr, int nr, const float* const* a, const uint16_t* b, int64_t ldb,
                                  float* const* c) {
  kernel(k, mr, nr, a, b, ldb, c);
}

}  // namespace edgegan::cpu
