// AVX-512 micro-kernel: 8 rows x 32 columns = 16 zmm accumulators, 2 zmm of B
// per step, rows broadcast from memory. Partial column tiles use lane masks, so
// a head with 3 output channels loads exactly 3 floats of B per step.
// fp16 weights (B as IEEE halves) are widened in registers with VCVTPH2PS, part
// of AVX-512F: half the bytes of B stream from memory.
// Compiled with -mavx512f -mfma and nothing shared inline (see the AVX2 file).
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels_cpu/gemm_microkernel.h"

namespace edgegan::cpu {
namespace {

// Weight streaming (a tiny map with a huge [Cin][Cout], e.g. 4x4x1024 -> 512 k5 at
// batch 1): each B row is used by one or two tiles, so B comes from memory and the
// hardware prefetcher alone falls behind. On deep products, prefetch kPrefetchBytes
// ahead along B: 64 rows of a converter panel (ldb 32), at least kPrefetchMinRows rows
// of a plain [Cin][Cout] (rows kilobytes apart). Measured on 4x4x1024 -> 512 k5, 1
// thread: 3.0-3.3 ms without, 2.8 ms at 1 KiB ahead, 2.1 ms at 8 KiB, no better
// beyond. Tiles of one or two rows use each B row only once or twice whatever the
// depth (a 1x1 noise input's taps: DCGAN-64's first layer streams 3.3 MB of weights
// for 0.8 M MACs), so they prefetch too: that layer 0.082-0.085 -> 0.070-0.077 ms.
// Other shallow products (B in L2) only lose issue slots to it.
constexpr int64_t kPrefetchBytes = 8192, kPrefetchMinRows = 8;
constexpr int64_t kPrefetchMinK = 512;  // elements

inline __mmask16 lanes(int n) { return n >= 16 ? __mmask16(0xFFFF) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1); }

// Columns [16 * half, 16 * half + 16) of B row `bp`, lanes >= n zero.
inline __m512 load_b(const float* bp, int half, __mmask16 m, bool full) {
  return full ? _mm512_loadu_ps(bp + 16 * half) : _mm512_maskz_loadu_ps(m, bp + 16 * half);
}
inline __m512 load_b(const uint16_t* bp, int half, __mmask16 m, bool full) {
  if (full) return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(bp + 16 * half)));
  // No 16-bit masked load without AVX-512BW: stage the valid halves.
  alignas(32) uint16_t staged[16] = {};
  std::memcpy(staged, bp + 16 * half, static_cast<size_t>(__builtin_popcount(m)) * sizeof(uint16_t));
  return _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(staged)));
}

template <int MR, bool kFull, bool kPrefetch, typename BT>
void tile(int64_t k, int nr, const float* const* a, const BT* b, int64_t ldb, float* const* c) {
  const __mmask16 m0 = lanes(nr), m1 = lanes(nr - 16);
  const int64_t prefetch_ahead = kPrefetch ? std::max(kPrefetchMinRows, kPrefetchBytes / (ldb * static_cast<int64_t>(sizeof(BT)))) * ldb : 0;
  __m512 acc0[MR], acc1[MR];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) acc0[i] = acc1[i] = _mm512_setzero_ps();
  if (kFull || nr > 16) {
    for (int64_t p = 0; p < k; ++p) {
      const BT* bp = b + p * ldb;
      if constexpr (kPrefetch) {
        _mm_prefetch(reinterpret_cast<const char*>(bp + prefetch_ahead), _MM_HINT_T0);
        if constexpr (sizeof(BT) == 4) _mm_prefetch(reinterpret_cast<const char*>(bp + prefetch_ahead + 16), _MM_HINT_T0);
      }
      const __m512 b0 = load_b(bp, 0, m0, kFull), b1 = load_b(bp, 1, m1, kFull);
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i) {
        const __m512 av = _mm512_set1_ps(a[i][p]);
        acc0[i] = _mm512_fmadd_ps(av, b0, acc0[i]);
        acc1[i] = _mm512_fmadd_ps(av, b1, acc1[i]);
      }
    }
  } else {  // at most 16 columns: one vector of B per step
    for (int64_t p = 0; p < k; ++p) {
      const __m512 b0 = load_b(b + p * ldb, 0, m0, false);
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i) acc0[i] = _mm512_fmadd_ps(_mm512_set1_ps(a[i][p]), b0, acc0[i]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    _mm512_mask_storeu_ps(c[i], m0, _mm512_add_ps(_mm512_maskz_loadu_ps(m0, c[i]), acc0[i]));
    if (nr > 16) _mm512_mask_storeu_ps(c[i] + 16, m1, _mm512_add_ps(_mm512_maskz_loadu_ps(m1, c[i] + 16), acc1[i]));
  }
}

template <int MR, typename BT>
void tile_any(int64_t k, int nr, const float* const* a, const BT* b, int64_t ldb, float* const* c) {
  const bool streaming = (k >= kPrefetchMinK || MR <= 2) && ldb > 0;
  if (nr == 32 && streaming) tile<MR, true, true>(k, nr, a, b, ldb, c);
  else if (nr == 32) tile<MR, true, false>(k, nr, a, b, ldb, c);
  else tile<MR, false, false>(k, nr, a, b, ldb, c);
}

template <typename BT>
void kernel(int64_t k, int mr, int nr, const float* const* a, const BT* b, int64_t ldb, float* const* c) {
  switch (mr) {
    case 1: return tile_any<1>(k, nr, a, b, ldb, c);
    case 2: return tile_any<2>(k, nr, a, b, ldb, c);
    case 3: return tile_any<3>(k, nr, a, b, ldb, c);
    case 4: return tile_any<4>(k, nr, a, b, ldb, c);
    case 5: return tile_any<5>(k, nr, a, b, ldb, c);
    case 6: return tile_any<6>(k, nr, a, b, ldb, c);
    case 7: return tile_any<7>(k, nr, a, b, ldb, c);
    default: return tile_any<8>(k, nr, a, b, ldb, c);
  }
}

}  // namespace

void gemm_ukernel_8x32__avx512(int64_t k, int mr, int nr, const float* const* a, const float* b, int64_t ldb,
                               float* const* c) {
  kernel(k, mr, nr, a, b, ldb, c);
}

void gemm_ukernel_8x32__avx512_f16w(int64_t k, int mr, int nr, const float* const* a, const uint16_t* b, int64_t ldb,
                                    float* const* c) {
  kernel(k, mr, nr, a, b, ldb, c);
}

}  // namespace edgegan::cpu
