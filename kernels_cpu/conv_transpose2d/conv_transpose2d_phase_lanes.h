// Phase-lanes path of the split deconvolution, for thin layers: a few output
// channels (1-8) and kernels up to 9 taps per phase, any stride — FSRCNN's 9x9
// stride-3 head to one channel, where a GEMM tile over output channels leaves 15 of
// 16 lanes idle and the dot path's weights do not fit. Here the lanes hold
// consecutive positions q of the phase grid instead:
//
//   Along each axis, phase r's output o = q*stride + r - pad_begin reads input
//   q - offset for its taps' offsets (0 .. span-1). With one position q for every
//   phase, all stride_h*stride_w phases read the same span_h x span_w shifted input
//   vectors: one vector load feeds every (phase, channel) accumulator, each with its
//   own broadcast weight ("outputs": up to 16 in registers per micro-kernel call;
//   layers with more take several passes over the same input).
//
//   1. Each input row is transposed once, when first needed, from NHWC pixels into
//      per-channel planes with zero columns around them (a ring of span_h rows per
//      thread), so the shifted vectors are plain loads and columns outside the
//      image read zeros; rows outside the image are skipped.
//   2. A task is one phase-grid row q_h of one image: the micro-kernel
//      (phase_lanes_ukernel.h) sums every output of a block of positions, which go
//      to their strided output pixels plus bias; then the activation (and residual)
//      over the whole output rows the task made, which no other task touches.
//
// Missing taps (a phase with fewer taps than the span) are zero weights: the layer's
// weights are packed once, by the session, as [pass][Cin][span_h][span_w][outputs].
// The results do not depend on the thread count (each output is summed by one task,
// in one order).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "kernels_cpu/common/cpu_isa.h"
#include "kernels_cpu/common/epilogue.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"

namespace edgegan::cpu {

constexpr int64_t kPhaseLanesMaxChannels = 8;
constexpr int64_t kPhaseLanesMaxStride = 4;  // per axis
// 4x4 phases x 8 channels in passes of at least 8 outputs (the scalar family's maximum).
constexpr int64_t kPhaseLanesMaxPasses = 16;

struct PhaseLanesPlan {
  bool ok = false;
  Isa isa = Isa::kScalar;  // the micro-kernel family it was planned for
  int64_t cin = 0, cout = 0;
  int span_h = 0, span_w = 0;
  int64_t qh_lo = 0, qh_hi = 0, qw_lo = 0, qw_hi = 0;  // every phase's positions lie in these
  int64_t left = 0;          // plane column of input column 0 (zeros before it)
  int64_t plane_stride = 0;  // floats per channel plane
  int64_t outputs = 0;       // stride_h * stride_w * cout
  // Passes: outputs [pass_begin[i], pass_begin[i + 1]), each at most the family's max.
  // Held inline: the split kernel plans a thin layer in every call where the session
  // gave no plan, and a training step must not allocate.
  int64_t pass_count = 0;
  std::array<int64_t, kPhaseLanesMaxPasses + 1> pass_begin{};
  int64_t passes() const { return pass_count; }
  int64_t ring_floats() const { return span_h * cin * plane_stride; }
  int64_t weight_floats() const { return cin * span_h * span_w * outputs; }
};

// The plan for the active ISA's family; ok == false where the layer is not thin (more
// than 8 output channels, a stride past 4, taps of a phase reaching past 9 inputs on an
// axis) or its ring of rows would pass 4 MiB per thread. Allocates nothing.
PhaseLanesPlan plan_phase_lanes(const ConvShape& shape, const std::vector<AxisPhase>& phases_h, const std::vector<AxisPhase>& phases_w);

// Which thin layers take this path is the split kernel's choice
// (conv_transpose2d_split_phase_lanes), against its other paths.

// Writes the layer's weights (float or fp16 sub-kernels, any panel width) in the
// kernel's order: plan.weight_floats() floats.
void pack_phase_lanes_weights(const ConvShape& shape, const ConvTranspose2DWeights& weights, const PhaseLanesPlan& plan, float* out);

// Scratch at `threads` threads, in floats: each thread's ring of transposed rows.
int64_t phase_lanes_workspace_floats(const PhaseLanesPlan& plan, int threads);

// The whole layer (plan.ok for the active ISA): `packed` is pack_phase_lanes_weights'
// output, `workspace` holds phase_lanes_workspace_floats(plan, threads) floats.
void conv_transpose2d_phase_lanes(const ConvShape& shape, const ConvTranspose2DWeights& weights, const PhaseLanesPlan& plan,
                                  const float* packed, const float* x, float* y, const Epilogue& epilogue, int threads,
                                  float* workspace);

}  // namespace edgegan::cpu
