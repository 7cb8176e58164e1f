// AVX-512 micro-kernel: 8 rows x 32 columns = 16 zmm accumulators, 2 zmm of B
// per step, rows broadcast from memory. Partial column tiles use lane masks, so
// a head with 3 output channels loads exactly 3 floats of B per step.
// Compiled with -mavx512f -mfma and nothing shared inline (see the AVX2 file).
#include <immintrin.h>

#include "kernels_cpu/gemm_microkernel.h"

namespace edgegan::cpu {
namespace {

inline __mmask16 lanes(int n) { return n >= 16 ? __mmask16(0xFFFF) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1); }

template <int MR, bool kFull>
void tile(int64_t k, int nr, const float* const* a, const float* b, int64_t ldb, float* const* c) {
  const __mmask16 m0 = lanes(nr), m1 = lanes(nr - 16);
  __m512 acc0[MR], acc1[MR];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) acc0[i] = acc1[i] = _mm512_setzero_ps();
  if (kFull || nr > 16) {
    for (int64_t p = 0; p < k; ++p) {
      const float* bp = b + p * ldb;
      const __m512 b0 = kFull ? _mm512_loadu_ps(bp) : _mm512_maskz_loadu_ps(m0, bp);
      const __m512 b1 = kFull ? _mm512_loadu_ps(bp + 16) : _mm512_maskz_loadu_ps(m1, bp + 16);
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i) {
        const __m512 av = _mm512_set1_ps(a[i][p]);
        acc0[i] = _mm512_fmadd_ps(av, b0, acc0[i]);
        acc1[i] = _mm512_fmadd_ps(av, b1, acc1[i]);
      }
    }
  } else {  // at most 16 columns: one vector of B per step
    for (int64_t p = 0; p < k; ++p) {
      const __m512 b0 = _mm512_maskz_loadu_ps(m0, b + p * ldb);
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

template <int MR>
void tile_any(int64_t k, int nr, const float* const* a, const float* b, int64_t ldb, float* const* c) {
  if (nr == 32) tile<MR, true>(k, nr, a, b, ldb, c);
  else tile<MR, false>(k, nr, a, b, ldb, c);
}

}  // namespace

void gemm_ukernel_8x32__avx512(int64_t k, int mr, int nr, const float* const* a, const float* b, int64_t ldb,
                               float* const* c) {
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

}  // namespace edgegan::cpu
