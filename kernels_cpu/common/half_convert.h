// Runs of halves <-> floats, for activations stored in half precision (an fp16 session on
// the CPU). Every family gives the same bits as kernels_common/half.h's scalar functions
// (round to nearest, ties to even; a float past the half range becomes +-inf), except NaN
// payloads: each keeps NaN as NaN, the instructions keep more of the payload.
//   scalar: half.h per value;
//   avx2 (also taken by avx512): F16C VCVTPH2PS / VCVTPS2PH, 8 per instruction (every
//     AVX2 CPU has F16C, and cpu_isa checks it);
//   neon (and neonfp16arith): FCVTL / FCVTN, part of ARMv8-A.
// A CPU without F16C runs the scalar family: slower, same results.
#pragma once

#include <cstdint>

#include "kernels_cpu/common/cpu_isa.h"

namespace edgegan::cpu {

// y[i] = x[i] widened; exact.
void widen_halves(const uint16_t* x, float* y, int64_t n);
// y[i] = x[i] rounded to half. Returns whether a finite x[i] became +-inf (an overflow:
// an fp16 session reports it rather than hand on an infinity); inf and NaN in x are not
// overflows.
bool narrow_to_halves(const float* x, uint16_t* y, int64_t n);

// One family's functions (tests compare them; the two above take the active family's).
void widen_halves(Isa isa, const uint16_t* x, float* y, int64_t n);
bool narrow_to_halves(Isa isa, const float* x, uint16_t* y, int64_t n);

void widen_halves__scalar(const uint16_t* x, float* y, int64_t n);
bool narrow_to_halves__scalar(const float* x, uint16_t* y, int64_t n);
#if defined(EDGEGAN_HAVE_X86_KERNELS)
void widen_halves__avx2(const uint16_t* x, float* y, int64_t n);
bool narrow_to_halves__avx2(const float* x, uint16_t* y, int64_t n);
#endif
#if defined(EDGEGAN_HAVE_NEON_KERNELS)
void widen_halves__neon(const uint16_t* x, float* y, int64_t n);
bool narrow_to_halves__neon(const float* x, uint16_t* y, int64_t n);
#endif

}  // namespace edgegan::cpu
