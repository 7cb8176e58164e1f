// Pixel-lanes path of the split transposed convolution, for the RGB / grey heads (1–3
// output channels, stride 2x2): the vector lanes hold 16 consecutive output
// pixels of one phase row, not channels. A head's output is too narrow for a GEMM
// tile (13 of 16 lanes idle) and a dot product along Cin pays a horizontal
// reduction per pixel; here neither happens:
//
//   1. Each input row is transposed once, as it is first needed, from NHWC pixels
//      into per-channel planes (a ring of a few rows per thread, in L1/L2).
//   2. For a block of 16 phase positions q, every (phase, tap) of all four phases
//      reads one shifted 16-pixel vector of a plane, and the phases share those
//      vectors: a k4 layer's 16 (phase, tap) pairs read 9 distinct shifts. Each
//      vector is multiplied by one broadcast weight per output channel and added to
//      that phase's accumulator: 4 phases x Cout x (1 or 2 blocks) accumulators,
//      all in registers for the whole reduction over Cin.
//   3. The sums, plus bias, go to their interleaved output pixels; the activation
//      then runs over the whole contiguous output rows.
//
// Only the sub-kernels' real taps are multiplied (no stride zero is ever read).
// At the image border a vector reads the planes' zero halo, like the masked lanes
// of a partial tile: rows above and below the image are a zero plane, columns left
// and right of it zero padding in each plane row.
//
// The weights are used in the order the kernel reads them, [Cin][slot] (slot =
// every (phase, tap, channel) in loop order), which the session packs once from
// the file's sub-kernels (pack_pixel_lanes_weights); callers without a packed copy
// (the trainer, kernel tests) get one packed per call.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"
#include "kernels_cpu/common/epilogue.h"

namespace edgegan::cpu {

constexpr int kPixelLanesMaxChannels = 3;
constexpr int kPixelLanesMaxSpan = 3;  // distinct input offsets per axis over both phases

// Where a layer can take the pixel-lanes path, and how. Per axis, each phase reads
// input q - e for its taps' "effective offsets" e (the tap offset minus the phase's
// first q, so that lane l of every phase is the phase's (l)-th position); the union
// over both phases is [e_min, e_min + span). Supported: the axis patterns of the
// output-doubling stride-2 layers of DCGAN-style generators (k3 p1 op1, k4 p1,
// k5 p2 op1), the same pattern on both axes.
struct PixelLanesPlan {
  bool ok = false;
  int pattern = -1;  // index into kPixelLanesAxisPatterns (pixel_lanes_ukernel.h), both axes
  int cout = 0;
  int64_t cin = 0;
  int span_h = 0, span_w = 0;
  int64_t e_min_h = 0, e_min_w = 0;
  unsigned mask_h[2] = {0, 0}, mask_w[2] = {0, 0};  // per phase: bit r when it has a tap at e_min + r
  int tap_h[2][kPixelLanesMaxSpan] = {}, tap_w[2][kPixelLanesMaxSpan] = {};  // that tap's index in the phase, or -1
  int64_t rows = 0, cols = 0;  // positions q per phase (the same for both phases of an axis)
  int64_t slots = 0;           // weights per input channel, in kernel order
  // Ring of transposed input rows: each row is Cin planes of `plane_stride` floats,
  // data starting `halo` floats in.
  int64_t halo = 0, plane_stride = 0;
  int64_t ring_rows = 0;  // span_h + 1
  int64_t ring_floats() const { return ring_rows * cin * plane_stride; }
  int64_t data_floats = 0;  // the input row's pixels rounded up to whole vectors (zeros after them)
  int64_t weight_floats() const { return cin * slots; }  // packed weights, [Cin][slots]
};

// ok == false when the layer's geometry is not supported (other strides, patterns,
// more than 3 output channels, rows narrower than 16 pixels) or its ring would pass
// 128 KiB per thread (it is meant to stay in L2); the caller then takes the dot path.
PixelLanesPlan plan_pixel_lanes(const ConvShape& shape, const std::vector<AxisPhase>& phases_h,
                                const std::vector<AxisPhase>& phases_w);

// Writes the layer's weights (float or fp16 sub-kernels, any panel width) in the
// kernel's [Cin][slot] order: plan.weight_floats() floats.
void pack_pixel_lanes_weights(const ConvShape& shape, const ConvTranspose2DWeights& weights, const PixelLanesPlan& plan,
                              float* out);

// True when the active ISA has a pixel-lanes micro-kernel and the plan is ok.
bool pixel_lanes_available(const PixelLanesPlan& plan);

// Scratch the path needs at `threads` threads, in floats: each thread's ring of
// transposed input rows (64-byte aligned within it, whatever the workspace's alignment).
int64_t pixel_lanes_workspace_floats(const PixelLanesPlan& plan, int threads);

// The whole layer on the pixel-lanes path (plan.ok, pixel_lanes_available):
// `packed` is pack_pixel_lanes_weights' output, `workspace` holds
// pixel_lanes_workspace_floats(plan, threads) floats (contents ignored).
void conv_transpose2d_pixel_lanes(const ConvShape& shape, const ConvTranspose2DWeights& weights, const PixelLanesPlan& plan,
                                  const float* packed, const float* x, float* y, const Epilogue& epilogue, int threads,
                                  float* workspace);

}  // namespace edgegan::cpu
