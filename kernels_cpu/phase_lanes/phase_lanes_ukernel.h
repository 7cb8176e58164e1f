// Phase-lanes micro-kernels (conv_transpose2d_phase_lanes.h), for thin transposed
// convolutions (a few output channels, large kernels, strides 2-4): the vector lanes
// hold consecutive positions q along a row of the phase grid, which every phase
// shares, so one shifted vector of an input plane feeds every phase's accumulator.
//
//   run: for `blocks` blocks of `width` consecutive positions q_w (one q_h row):
//     acc[o * blocks * width + l] = sum over ci < cin, the rows t in rows[], u < span_w of
//         rows[t][ci * plane_stride + l - u] * weights[((ci * span_h + t) * span_w + u) * outputs + o]
//   for o < outputs (each output one (phase, channel) pair), l < blocks * width.
//   rows[t] == nullptr: input row q_h - t lies outside the image and is skipped.
//
// One function per output count (1..max_outputs), each with its accumulators in
// registers; `blocks` is fixed per output count by the family (blocks_for).
#pragma once

#include <cstdint>

#include "kernels_cpu/common/cpu_isa.h"

namespace edgegan::cpu {

constexpr int kPhaseLanesMaxSpan = 9;      // taps per phase and axis (kernel 9 at stride 1)
constexpr int kPhaseLanesMaxOutputs = 16;  // (phase, channel) pairs one call can hold

struct PhaseLanesArgs {
  int64_t cin = 0, plane_stride = 0;
  int span_h = 0, span_w = 0;
  const float* rows[kPhaseLanesMaxSpan] = {};  // at plane column of lane 0, channel 0
  const float* weights = nullptr;              // [cin][span_h][span_w][outputs]
  float* acc = nullptr;                        // [outputs][blocks * width]
};

using PhaseLanesFn = void (*)(const PhaseLanesArgs& args);

struct PhaseLanesUkernel {
  PhaseLanesFn run[kPhaseLanesMaxOutputs];  // [outputs - 1]; nullptr past max_outputs
  int blocks[kPhaseLanesMaxOutputs];        // blocks per call for that output count
  int width;                                // lanes per block
  int max_outputs;
  Isa isa;
  const char* name;
};

// The family of the active ISA (every family has one: the scalar family is portable C++).
const PhaseLanesUkernel& phase_lanes_ukernel();
const PhaseLanesUkernel& phase_lanes_ukernel(Isa isa);

const PhaseLanesUkernel& phase_lanes_ukernel__scalar();
#if defined(EDGEGAN_HAVE_X86_KERNELS)
const PhaseLanesUkernel& phase_lanes_ukernel__avx2();
const PhaseLanesUkernel& phase_lanes_ukernel__avx512();
#endif
#if defined(EDGEGAN_HAVE_NEON_KERNELS)
const PhaseLanesUkernel& phase_lanes_ukernel__neon();
#endif

// The same sums in half-precision arithmetic (ARMv8.2-A FP16, FMLA on 8 halves), for an
// fp16 session's stride-1 thin convolutions: planes and weights are halves, acc floats.
// Products are summed in fp16 over blocks of `flush_channels` input channels (every tap
// of each), then widened and added into fp32 sums, so the rounding does not grow with
// cin: the caller keeps a block at most kPhaseLanesHalfBlockTerms taps.
constexpr int kPhaseLanesHalfBlockTerms = 18;

struct PhaseLanesHalfArgs {
  int64_t cin = 0, plane_stride = 0;
  int span_h = 0, span_w = 0;
  int64_t flush_channels = 1;
  const uint16_t* rows[kPhaseLanesMaxSpan] = {};  // at plane column of lane 0, channel 0
  const uint16_t* weights = nullptr;              // [cin][span_h][span_w][outputs], readable 7 halves past the end
  float* acc = nullptr;                           // [outputs][blocks * width], written whole
};

using PhaseLanesHalfFn = void (*)(const PhaseLanesHalfArgs& args);

struct PhaseLanesHalfUkernel {
  PhaseLanesHalfFn run[kPhaseLanesMaxOutputs];  // [outputs - 1]
  int blocks[kPhaseLanesMaxOutputs];
  int width;
  int max_outputs;
  const char* name;
};

// The active ISA's half-arithmetic family, or nullptr where it computes halves in fp32
// (every ISA but neonfp16arith, and builds without EDGEGAN_NEON_FP16_ARITH).
const PhaseLanesHalfUkernel* phase_lanes_half_ukernel();
#if defined(EDGEGAN_HAVE_NEON_FP16_KERNELS)
const PhaseLanesHalfUkernel& phase_lanes_ukernel__neonfp16arith();
#endif

}  // namespace edgegan::cpu
