// half_convert.h with NEON's FCVTL / FCVTN (ARMv8-A; rounding as FPCR says: nearest-even
// by default, which nothing in the engine changes).
#include <arm_neon.h>

#include "kernels_cpu/common/half_convert.h"

namespace edgegan::cpu {

void widen_halves__neon(const uint16_t* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const float16x8_t h = vreinterpretq_f16_u16(vld1q_u16(x + i));
    vst1q_f32(y + i, vcvt_f32_f16(vget_low_f16(h)));
    vst1q_f32(y + i + 4, vcvt_high_f32_f16(h));
  }
  if (i < n) widen_halves__scalar(x + i, y + i, n - i);
}

bool narrow_to_halves__neon(const float* x, uint16_t* y, int64_t n) {
  // Floats from 65520 (the first that rounds past 65504) up to the largest finite one.
  const float32x4_t first_overflow = vdupq_n_f32(65520.f), infinity = vdupq_n_f32(__builtin_inff());
  uint32x4_t overflow = vdupq_n_u32(0);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const float32x4_t lo = vld1q_f32(x + i), hi = vld1q_f32(x + i + 4);
    const float32x4_t alo = vabsq_f32(lo), ahi = vabsq_f32(hi);
    overflow = vorrq_u32(overflow, vandq_u32(vcgeq_f32(alo, first_overflow), vcltq_f32(alo, infinity)));
    overflow = vorrq_u32(overflow, vandq_u32(vcgeq_f32(ahi, first_overflow), vcltq_f32(ahi, infinity)));
    vst1q_u16(y + i, vreinterpretq_u16_f16(vcvt_high_f16_f32(vcvt_f16_f32(lo), hi)));
  }
  bool any = vmaxvq_u32(overflow) != 0;
  if (i < n) any |= narrow_to_halves__scalar(x + i, y + i, n - i);
  return any;
}

}  // namespace edgegan::cpu
