// IEEE 754 half precision (binary16) <-> float, portable bit manipulation. The
// converter uses it to store fp16 weights (`edgegan-convert --weights fp16`),
// the scalar kernels and the weight-repacking paths (the CPU's, and the filters
// repacked for cuDNN) to read and write them; the SIMD micro-kernels convert with the
// CPU's own instructions (F16C, AVX-512F, NEON FCVTL), which give the same results:
// every half is exactly a float.
#pragma once

#include <cstdint>
#include <cstring>

namespace edgegan::kernels {

inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1Fu, mantissa = h & 0x3FFu, bits;
  if (exponent == 0x1F) {
    bits = sign | 0x7F800000u | (mantissa << 13);  // inf / NaN (payload kept)
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);  // normal: rebias 15 -> 127
  } else if (mantissa == 0) {
    bits = sign;  // +-0
  } else {  // subnormal half: normalise into a float
    exponent = 113;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    bits = sign | (exponent << 23) | ((mantissa & 0x3FFu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Round to nearest, ties to even; overflow gives +-inf, NaN stays NaN.
inline uint16_t float_to_half(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs = bits & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u) return static_cast<uint16_t>(sign | 0x7C00u | (abs > 0x7F800000u ? 0x200u : 0u));
  if (abs >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // rounds past 65504
  if (abs < 0x38800000u) {  // below the smallest normal half (2^-14): subnormal or zero
    if (abs < 0x33000000u) return sign;  // below half of the smallest subnormal (2^-25)
    const uint32_t exponent = abs >> 23, mantissa = (abs & 0x7FFFFFu) | 0x800000u;
    const uint32_t shift = 126 - exponent;  // 14..24: places to drop to reach units of 2^-24
    uint32_t half = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1), midpoint = 1u << (shift - 1);
    if (rest > midpoint || (rest == midpoint && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = ((abs >> 13) - (112u << 10));  // rebias 127 -> 15, keep 10 mantissa bits
  const uint32_t rest = abs & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // may carry into the exponent: still right
  return static_cast<uint16_t>(sign | half);
}

}  // namespace edgegan::kernels
