// AArch64 ARMv8.2-A FP16 arithmetic (Cortex-A78AE in Jetson Orin, A76/A55 and
// later), for fp16 weights: 8 rows x 8 columns, half-precision FMLA (8 MACs
// per instruction, twice the fp32 rate). Built when EDGEGAN_NEON_FP16_ARITH=ON;
// chosen at run time only if the CPU reports ASIMDHP (cpu_isa.cpp). The _f16 entry
// point takes A as halves too (an fp16 session's activations, read as they are).
//
// Accuracy: A is rounded to fp16 as it is loaded (if floats), and products are summed in fp16
// over at most 8 reduction steps, then widened and added into fp32 accumulators,
// so the rounding error does not grow with K. Outputs stay within the 1e-2 budget
// of fp16-weight models (tests/engine/golden_test.cpp); activations beyond
// +-65504 would overflow, which GAN generators' normalised activations do not reach.
// The fp32 entry point is the plain NEON kernel's.
#include <arm_neon.h>

#include <algorithm>

#include "kernels_cpu/gemm/gemm_ukernel.h"

namespace edgegan::cpu {
namespace {

constexpr int kNR = 8, kBlock = 8;  // reduction steps summed in fp16 before widening

template <bool kFull>
inline float16x8_t load_b(const uint16_t* row, int nr) {
  if constexpr (kFull) {
    return vreinterpretq_f16_u16(vld1q_u16(row));
  } else {
    alignas(16) uint16_t staged[kNR] = {};  // no masked loads: stage the valid halves
    std::copy(row, row + nr, staged);
    return vreinterpretq_f16_u16(vld1q_u16(staged));
  }
}

// acc16 += b[L] * lane L of a16: FMLA by element. Written as the instruction because
// GCC 12 turns vfmaq_laneq_f16 into a DUP and a vector FMLA (and spills), since the
// element operand must sit in v0-v15 (the "x" constraint).
template <int L>
inline void fma_lane(float16x8_t& acc16, float16x8_t b, float16x8_t a16) {
  asm("fmla %0.8h, %1.8h, %2.h[%3]" : "+w"(acc16) : "w"(b), "x"(a16), "i"(L));
}

// acc16 (+)= b[l] * lane l of a16, for l < 8, in that order.
inline float16x8_t fma8(float16x8_t acc16, const float16x8_t (&b)[kBlock], float16x8_t a16) {
  fma_lane<0>(acc16, b[0], a16);
  fma_lane<1>(acc16, b[1], a16);
  fma_lane<2>(acc16, b[2], a16);
  fma_lane<3>(acc16, b[3], a16);
  fma_lane<4>(acc16, b[4], a16);
  fma_lane<5>(acc16, b[5], a16);
  fma_lane<6>(acc16, b[6], a16);
  fma_lane<7>(acc16, b[7], a16);
  return acc16;
}

// 8 values of row a from p, as halves.
inline float16x8_t load_a(const float* a, int64_t p) { return vcombine_f16(vcvt_f16_f32(vld1q_f32(a + p)), vcvt_f16_f32(vld1q_f32(a + p + 4))); }
inline float16x8_t load_a(const uint16_t* a, int64_t p) { return vreinterpretq_f16_u16(vld1q_u16(a + p)); }
inline float16x8_t broadcast_a(const float* a, int64_t p) { return vdupq_n_f16(static_cast<float16_t>(a[p])); }
inline float16x8_t broadcast_a(const uint16_t* a, int64_t p) { return vreinterpretq_f16_u16(vdupq_n_u16(a[p])); }

template <int MR, bool kFull, typename AT>
void tile(int64_t k, int nr, const AT* const* a, const uint16_t* b, int64_t ldb, float* const* c) {
  float32x4_t acc0[MR], acc1[MR];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) acc0[i] = acc1[i] = vdupq_n_f32(0.f);
  int64_t p = 0;
  for (; p + kBlock <= k; p += kBlock) {
    float16x8_t bv[kBlock];
#pragma GCC unroll 8
    for (int l = 0; l < kBlock; ++l) bv[l] = load_b<kFull>(b + (p + l) * ldb, nr);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const float16x8_t sum = fma8(vdupq_n_f16(0), bv, load_a(a[i], p));
      acc0[i] = vaddq_f32(acc0[i], vcvt_f32_f16(vget_low_f16(sum)));
      acc1[i] = vaddq_f32(acc1[i], vcvt_high_f32_f16(sum));
    }
  }
  if (p < k) {  // the last k % 8 steps, summed in fp16 the same way
    float16x8_t sum[MR];
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) sum[i] = vdupq_n_f16(0);
    for (; p < k; ++p) {
      const float16x8_t bv = load_b<kFull>(b + p * ldb, nr);
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i) sum[i] = vfmaq_f16(sum[i], bv, broadcast_a(a[i], p));
    }
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      acc0[i] = vaddq_f32(acc0[i], vcvt_f32_f16(vget_low_f16(sum[i])));
      acc1[i] = vaddq_f32(acc1[i], vcvt_high_f32_f16(sum[i]));
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    if constexpr (kFull) {
      vst1q_f32(c[i], vaddq_f32(vld1q_f32(c[i]), acc0[i]));
      vst1q_f32(c[i] + 4, vaddq_f32(vld1q_f32(c[i] + 4), acc1[i]));
    } else {
      alignas(16) float sums[kNR];
      vst1q_f32(sums, acc0[i]);
      vst1q_f32(sums + 4, acc1[i]);
      for (int j = 0; j < nr; ++j) c[i][j] += sums[j];
    }
  }
}

template <bool kFull, typename AT>
void tile_mr(int64_t k, int mr, int nr, const AT* const* a, const uint16_t* b, int64_t ldb, float* const* c) {
  switch (mr) {
    case 1: return tile<1, kFull>(k, nr, a, b, ldb, c);
    case 2: return tile<2, kFull>(k, nr, a, b, ldb, c);
    case 3: return tile<3, kFull>(k, nr, a, b, ldb, c);
    case 4: return tile<4, kFull>(k, nr, a, b, ldb, c);
    case 5: return tile<5, kFull>(k, nr, a, b, ldb, c);
    case 6: return tile<6, kFull>(k, nr, a, b, ldb, c);
    case 7: return tile<7, kFull>(k, nr, a, b, ldb, c);
    default: return tile<8, kFull>(k, nr, a, b, ldb, c);
  }
}

}  // namespace

void gemm_ukernel_8x8__neonfp16arith_f16w(int64_t k, int mr, int nr, const float* const* a, const uint16_t* b, int64_t ldb,
                                          float* const* c) {
  if (nr == kNR) return tile_mr<true>(k, mr, nr, a, b, ldb, c);
  tile_mr<false>(k, mr, nr, a, b, ldb, c);
}

void gemm_ukernel_8x8__neonfp16arith_f16(int64_t k, int mr, int nr, const uint16_t* const* a, const uint16_t* b, int64_t ldb,
                                         float* const* c) {
  if (nr == kNR) return tile_mr<true>(k, mr, nr, a, b, ldb, c);
  tile_mr<false>(k, mr, nr, a, b, ldb, c);
}

}  // namespace edgegan::cpu
