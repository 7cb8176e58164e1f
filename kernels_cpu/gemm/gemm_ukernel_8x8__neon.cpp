// AArch64 NEON micro-kernel: 8 rows x 8 columns = 16 q-register accumulators.
// The reduction is unrolled by 4: each row loads 4 consecutive A values into one
// register (8 registers), and each of the 4 B rows (2 registers) is multiplied
// by one lane of it (FMLA by element), so one A load feeds 8 FMAs. 16 + 8 + 4
// registers of the 32: nothing spills. Same shape on Cortex-A57 (Jetson Nano/TX2),
// A72 (Raspberry Pi 4) and A78AE (Jetson Orin).
//
// NEON has no masked loads: for a partial tile (nr < 8) each B row is copied into
// an 8-element stack row first, and lanes past nr are never stored. Full tiles
// (all but the last column tile of a layer) load B in place. fp16 weights (B as
// IEEE halves) are widened in registers with FCVTL, which every ARMv8-A has.
#include <arm_neon.h>

#include <algorithm>

#include "kernels_cpu/gemm/gemm_ukernel.h"

namespace edgegan::cpu {
namespace {

constexpr int kNR = 8;

// acc[i] (+)= b0/b1 * lane L of a[i], for every row.
template <int MR, int L>
inline void fma_lane(float32x4_t (&acc0)[MR], float32x4_t (&acc1)[MR], const float32x4_t (&va)[MR], float32x4_t b0,
                     float32x4_t b1) {
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    acc0[i] = vfmaq_laneq_f32(acc0[i], b0, va[i], L);
    acc1[i] = vfmaq_laneq_f32(acc1[i], b1, va[i], L);
  }
}

inline void load8(const float* row, float32x4_t& b0, float32x4_t& b1) {
  b0 = vld1q_f32(row);
  b1 = vld1q_f32(row + 4);
}
inline void load8(const uint16_t* row, float32x4_t& b0, float32x4_t& b1) {
  const float16x8_t h = vreinterpretq_f16_u16(vld1q_u16(row));
  b0 = vcvt_f32_f16(vget_low_f16(h));
  b1 = vcvt_high_f32_f16(h);
}

// Returns row p of B as two vectors: in place when the tile is full, else via `pad`.
template <bool kFull, typename BT>
inline void load_b(const BT* row, int nr, BT* pad, float32x4_t& b0, float32x4_t& b1) {
  if constexpr (kFull) {
    load8(row, b0, b1);
  } else {
    std::copy(row, row + nr, pad);
    load8(pad, b0, b1);
  }
}

template <int MR, bool kFull, typename BT>
void tile(int64_t k, int nr, const float* const* a, const BT* b, int64_t ldb, float* const* c) {
  float32x4_t acc0[MR], acc1[MR];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) acc0[i] = acc1[i] = vdupq_n_f32(0.f);
  alignas(16) BT pad[4][kNR] = {};  // partial tiles only: lanes >= nr stay zero
  int64_t p = 0;
  for (; p + 4 <= k; p += 4) {
    float32x4_t va[MR];
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) va[i] = vld1q_f32(a[i] + p);
    float32x4_t b0, b1;
    load_b<kFull>(b + (p + 0) * ldb, nr, pad[0], b0, b1);
    fma_lane<MR, 0>(acc0, acc1, va, b0, b1);
    load_b<kFull>(b + (p + 1) * ldb, nr, pad[1], b0, b1);
    fma_lane<MR, 1>(acc0, acc1, va, b0, b1);
    load_b<kFull>(b + (p + 2) * ldb, nr, pad[2], b0, b1);
    fma_lane<MR, 2>(acc0, acc1, va, b0, b1);
    load_b<kFull>(b + (p + 3) * ldb, nr, pad[3], b0, b1);
    fma_lane<MR, 3>(acc0, acc1, va, b0, b1);
  }
  for (; p < k; ++p) {
    float32x4_t b0, b1;
    load_b<kFull>(b + p * ldb, nr, pad[0], b0, b1);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const float32x4_t av = vld1q_dup_f32(a[i] + p);
      acc0[i] = vfmaq_f32(acc0[i], b0, av);
      acc1[i] = vfmaq_f32(acc1[i], b1, av);
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

template <bool kFull, typename BT>
void tile_mr(int64_t k, int mr, int nr, const float* const* a, const BT* b, int64_t ldb, float* const* c) {
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

void gemm_ukernel_8x8__neon(int64_t k, int mr, int nr, const float* const* a, const float* b, int64_t ldb,
                            float* const* c) {
  if (nr == kNR) return tile_mr<true>(k, mr, nr, a, b, ldb, c);
  tile_mr<false>(k, mr, nr, a, b, ldb, c);
}

void gemm_ukernel_8x8__neon_f16w(int64_t k, int mr, int nr, const float* const* a, const uint16_t* b, int64_t ldb,
                                 float* const* c) {
  if (nr == kNR) return tile_mr<true>(k, mr, nr, a, b, ldb, c);
  tile_mr<false>(k, mr, nr, a, b, ldb, c);
}

}  // namespace edgegan::cpu
