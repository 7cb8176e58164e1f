// The phase-lanes sums in half-precision arithmetic (phase_lanes_ukernel.h's
// PhaseLanesHalfArgs), ARMv8.2-A FP16: 8 positions per q register, FMLA .8h (twice the
// products of the fp32 family's FMLA .4s), 32 registers, up to 16 outputs per call.
// Each block of flush_channels input channels is summed in fp16 registers, then widened
// (FCVTL/FCVTL2) and added into the fp32 sums in acc, which stay in L1.
#include <arm_neon.h>

#include <utility>

#include "kernels_cpu/phase_lanes/phase_lanes_ukernel.h"
#include "kernels_cpu/phase_lanes/phase_lanes_ukernel_impl.h"

namespace edgegan::cpu {
namespace {

constexpr int kWidth = 8;

inline float16x8_t load(const uint16_t* p) { return vreinterpretq_f16_u16(vld1q_u16(p)); }

// acc[L][b] += v[b] * weight L, the weight a lane of a vector: FMLA by element, no
// broadcast per weight. Written as the instruction because GCC 12 turns
// vfmaq_laneq_f16 into a DUP and a vector FMLA (its element operand must sit in
// v0-v15, the "x" constraint).
template <int L, int B>
inline void fma_lane(float16x8_t (&acc)[B], const float16x8_t (&v)[B], float16x8_t w) {
#pragma GCC unroll 8
  for (int b = 0; b < B; ++b) asm("fmla %0.8h, %1.8h, %2.h[%3]" : "+w"(acc[b]) : "w"(v[b]), "x"(w), "i"(L % kWidth));
}

// One tap: the O weights at w (read 8 at a time; the packing leaves room past the last).
template <int O, int B, int... L>
inline void fma_tap(float16x8_t (&acc)[O][B], const float16x8_t (&v)[B], const uint16_t* w, std::integer_sequence<int, L...>) {
  float16x8_t wv[(O + kWidth - 1) / kWidth];
#pragma GCC unroll 2
  for (int i = 0; i < (O + kWidth - 1) / kWidth; ++i) wv[i] = load(w + i * kWidth);
  (fma_lane<L, B>(acc[L], v, wv[L / kWidth]), ...);
}

template <int O, int B>
void run(const PhaseLanesHalfArgs& g) {
  float16x8_t acc[O][B];
#pragma GCC unroll 16
  for (int o = 0; o < O; ++o)
#pragma GCC unroll 8
    for (int b = 0; b < B; ++b) {
      acc[o][b] = vdupq_n_f16(0);
      vst1q_f32(g.acc + (o * B + b) * kWidth, vdupq_n_f32(0.f));
      vst1q_f32(g.acc + (o * B + b) * kWidth + 4, vdupq_n_f32(0.f));
    }
  const uint16_t* rows[kPhaseLanesMaxSpan];
  int64_t row_weights[kPhaseLanesMaxSpan];
  int nrows = 0;
  for (int t = 0; t < g.span_h; ++t)
    if (g.rows[t]) rows[nrows] = g.rows[t], row_weights[nrows++] = int64_t{t} * g.span_w * O;
  const int64_t channel_weights = int64_t{g.span_h} * g.span_w * O;
  for (int64_t c0 = 0; c0 < g.cin; c0 += g.flush_channels) {
    const int64_t c1 = c0 + g.flush_channels < g.cin ? c0 + g.flush_channels : g.cin;
    for (int64_t ci = c0; ci < c1; ++ci) {
      const uint16_t* wc = g.weights + ci * channel_weights;
      const int64_t plane = ci * g.plane_stride;
      for (int r = 0; r < nrows; ++r) {
        const uint16_t* x = rows[r] + plane;
        const uint16_t* w = wc + row_weights[r];
        for (int u = 0; u < g.span_w; ++u, w += O) {
          float16x8_t v[B];
#pragma GCC unroll 8
          for (int b = 0; b < B; ++b) v[b] = load(x + b * kWidth - u);
          fma_tap<O, B>(acc, v, w, std::make_integer_sequence<int, O>{});
        }
      }
    }
    // The block's fp16 sums into the fp32 ones.
#pragma GCC unroll 16
    for (int o = 0; o < O; ++o)
#pragma GCC unroll 8
      for (int b = 0; b < B; ++b) {
        float* a = g.acc + (o * B + b) * kWidth;
        vst1q_f32(a, vaddq_f32(vld1q_f32(a), vcvt_f32_f16(vget_low_f16(acc[o][b]))));
        vst1q_f32(a + 4, vaddq_f32(vld1q_f32(a + 4), vcvt_high_f32_f16(acc[o][b])));
        acc[o][b] = vdupq_n_f16(0);
      }
  }
}

template <int... I>
constexpr PhaseLanesHalfUkernel make_family(std::integer_sequence<int, I...>) {
  using phase_lanes_impl::blocks_for;
  PhaseLanesHalfUkernel k{};
  ((k.run[I] = &run<I + 1, blocks_for(I + 1, 32)>), ...);
  ((k.blocks[I] = blocks_for(I + 1, 32)), ...);
  k.width = kWidth;
  k.max_outputs = kPhaseLanesMaxOutputs;
  k.name = "phase_lanes_ukernel__neonfp16arith";
  return k;
}

constexpr PhaseLanesHalfUkernel kFamily = make_family(std::make_integer_sequence<int, kPhaseLanesMaxOutputs>{});

}  // namespace

const PhaseLanesHalfUkernel& phase_lanes_ukernel__neonfp16arith() { return kFamily; }

}  // namespace edgegan::cpu
