// half_convert.h with F16C (compiled with -mavx2 -mfma -mf16c; only VEX-256 AVX and
// F16C instructions are used).
#include <immintrin.h>

#include "kernels_cpu/common/half_convert.h"

namespace edgegan::cpu {

void widen_halves__avx2(const uint16_t* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))));
  if (i < n) widen_halves__scalar(x + i, y + i, n - i);
}

bool narrow_to_halves__avx2(const float* x, uint16_t* y, int64_t n) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  // Floats from 65520 (the first that rounds past 65504) up to the largest finite one.
  const __m256 first_overflow = _mm256_set1_ps(65520.f), infinity = _mm256_set1_ps(__builtin_inff());
  __m256 overflow = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256 a = _mm256_and_ps(v, abs_mask);
    overflow = _mm256_or_ps(overflow, _mm256_and_ps(_mm256_cmp_ps(a, first_overflow, _CMP_GE_OQ), _mm256_cmp_ps(a, infinity, _CMP_LT_OQ)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  bool any = _mm256_movemask_ps(overflow) != 0;
  if (i < n) any |= narrow_to_halves__scalar(x + i, y + i, n - i);
  return any;
}

}  // namespace edgegan::cpu
