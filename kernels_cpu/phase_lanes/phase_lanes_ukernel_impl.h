// The phase-lanes micro-kernel's body (phase_lanes_ukernel.h), written once over a
// vector type V and included by each family's file, which compiles it with its own
// flags. V provides: type, width, zero(), load(p), broadcast(p), fma(a, b, c) = a*b + c,
// store(p, v). Only the family files include this header.
#pragma once

#include <utility>

#include "kernels_cpu/phase_lanes/phase_lanes_ukernel.h"

namespace edgegan::cpu::phase_lanes_impl {

// Blocks per call for O outputs with `registers` vector registers: the O*B accumulators,
// the B input vectors and a broadcast weight must fit, with a few to spare; more
// blocks give more independent FMA chains, up to 8.
constexpr int blocks_for(int outputs, int registers) {
  const int b = (registers - 4) / (outputs + 1);
  return b < 1 ? 1 : b > 8 ? 8 : b;
}

// O outputs, B blocks: every loop over them unrolls, so the accumulators stay in
// registers and each weight is one broadcast shared by the B blocks.
template <class V, int O, int B>
void run(const PhaseLanesArgs& g) {
  typename V::type acc[O][B];
#pragma GCC unroll 16
  for (int o = 0; o < O; ++o)
#pragma GCC unroll 8
    for (int b = 0; b < B; ++b) acc[o][b] = V::zero();
  // The rows inside the image, and where each one's weights start within a channel's.
  const float* rows[kPhaseLanesMaxSpan];
  int64_t row_weights[kPhaseLanesMaxSpan];
  int nrows = 0;
  for (int t = 0; t < g.span_h; ++t)
    if (g.rows[t]) rows[nrows] = g.rows[t], row_weights[nrows++] = int64_t{t} * g.span_w * O;
  const int64_t channel_weights = int64_t{g.span_h} * g.span_w * O;
  for (int64_t ci = 0; ci < g.cin; ++ci) {
    const float* wc = g.weights + ci * channel_weights;
    const int64_t plane = ci * g.plane_stride;
    for (int r = 0; r < nrows; ++r) {
      const float* x = rows[r] + plane;
      const float* w = wc + row_weights[r];
      for (int u = 0; u < g.span_w; ++u, w += O) {
        typename V::type v[B];
#pragma GCC unroll 8
        for (int b = 0; b < B; ++b) v[b] = V::load(x + b * V::width - u);
#pragma GCC unroll 16
        for (int o = 0; o < O; ++o) {
          const typename V::type wv = V::broadcast(w + o);
#pragma GCC unroll 8
          for (int b = 0; b < B; ++b) acc[o][b] = V::fma(v[b], wv, acc[o][b]);
        }
      }
    }
  }
#pragma GCC unroll 16
  for (int o = 0; o < O; ++o)
#pragma GCC unroll 8
    for (int b = 0; b < B; ++b) V::store(g.acc + (o * B + b) * V::width, acc[o][b]);
}

// The family's table: outputs 1..max_outputs with `registers` vector registers.
template <class V, int Registers, int MaxOutputs, int... I>
constexpr PhaseLanesUkernel make_family(std::integer_sequence<int, I...>, Isa isa, const char* name) {
  PhaseLanesUkernel k{};
  ((k.run[I] = I < MaxOutputs ? &run<V, I + 1, blocks_for(I + 1, Registers)> : nullptr), ...);
  ((k.blocks[I] = blocks_for(I + 1, Registers)), ...);
  k.width = V::width;
  k.max_outputs = MaxOutputs;
  k.isa = isa;
  k.name = name;
  return k;
}

template <class V, int Registers, int MaxOutputs>
constexpr PhaseLanesUkernel make_family(Isa isa, const char* name) {
  return make_family<V, Registers, MaxOutputs>(std::make_integer_sequence<int, kPhaseLanesMaxOutputs>{}, isa, name);
}

}  // namespace edgegan::cpu::phase_lanes_impl
