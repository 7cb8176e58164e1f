#include "kernels_cpu/common/half_convert.h"

#include <cstring>

#include "kernels_common/half.h"

namespace edgegan::cpu {

void widen_halves__scalar(const uint16_t* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = kernels::half_to_float(x[i]);
}

bool narrow_to_halves__scalar(const float* x, uint16_t* y, int64_t n) {
  bool overflow = false;
  for (int64_t i = 0; i < n; ++i) {
    y[i] = kernels::float_to_half(x[i]);
    uint32_t bits;
    std::memcpy(&bits, &x[i], sizeof bits);
    // A finite float whose half has the all-ones exponent (inf).
    overflow |= (bits & 0x7F800000u) != 0x7F800000u && (y[i] & 0x7C00u) == 0x7C00u;
  }
  return overflow;
}

void widen_halves(Isa isa, const uint16_t* x, float* y, int64_t n) {
  switch (isa) {
#if defined(EDGEGAN_HAVE_X86_KERNELS)
    case Isa::kAvx2:
    case Isa::kAvx512: return widen_halves__avx2(x, y, n);
#endif
#if defined(EDGEGAN_HAVE_NEON_KERNELS)
    case Isa::kNeon:
    case Isa::kNeonFp16Arith: return widen_halves__neon(x, y, n);
#endif
    default: return widen_halves__scalar(x, y, n);
  }
}

bool narrow_to_halves(Isa isa, const float* x, uint16_t* y, int64_t n) {
  switch (isa) {
#if defined(EDGEGAN_HAVE_X86_KERNELS)
    case Isa::kAvx2:
    case Isa::kAvx512: return narrow_to_halves__avx2(x, y, n);
#endif
#if defined(EDGEGAN_HAVE_NEON_KERNELS)
    case Isa::kNeon:
    case Isa::kNeonFp16Arith: return narrow_to_halves__neon(x, y, n);
#endif
    default: return narrow_to_halves__scalar(x, y, n);
  }
}

void widen_halves(const uint16_t* x, float* y, int64_t n) { widen_halves(active_isa(), x, y, n); }
bool narrow_to_halves(const float* x, uint16_t* y, int64_t n) { return narrow_to_halves(active_isa(), x, y, n); }

}  // namespace edgegan::cpu
