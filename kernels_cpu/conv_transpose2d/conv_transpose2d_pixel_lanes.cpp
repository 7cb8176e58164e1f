#include "kernels_cpu/conv_transpose2d/conv_transpose2d_pixel_lanes.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>

#include "kernels_cpu/common/half.h"
#include "kernels_cpu/pixel_lanes/pixel_lanes_ukernel.h"
#include "kernels_cpu/common/tap_gather.h"
#include "kernels_cpu/common/task_runs.h"

namespace edgegan::cpu {
namespace {

// A thread's ring of transposed input rows, in the caller's workspace: at most this
// many floats, so that it stays in L2; heads with more input channels or wider rows
// take the dot path.
constexpr int64_t kMaxRingFloats = 32768;  // 128 KiB
// Rows above and below the image read this zero plane (one transposed row's size).
constexpr int64_t kZeroRowFloats = 16384;
alignas(64) const float kZeroRow[kZeroRowFloats] = {};

constexpr int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

struct AxisPlan {
  bool ok = false;
  int64_t positions = 0, e_min = 0;
  int span = 0;
  unsigned mask[2] = {0, 0};
  int tap[2][kPixelLanesMaxSpan] = {};
};

// The effective offsets of both phases of one stride-2 axis (see PixelLanesPlan).
AxisPlan plan_axis(const ConvAxis& axis, const std::vector<AxisPhase>& phases) {
  AxisPlan p;
  if (axis.stride != 2 || phases.size() != 2) return p;
  p.positions = phases[0].q_end - phases[0].q_begin;
  int64_t e_max = INT64_MIN;
  p.e_min = INT64_MAX;
  for (const AxisPhase& ph : phases) {
    if (ph.taps.empty() || ph.q_end - ph.q_begin != p.positions) return p;
    for (int64_t off : ph.offsets) p.e_min = std::min(p.e_min, off - ph.q_begin), e_max = std::max(e_max, off - ph.q_begin);
  }
  if (p.positions <= 0 || e_max - p.e_min >= kPixelLanesMaxSpan) return p;
  p.span = static_cast<int>(e_max - p.e_min + 1);
  for (size_t a = 0; a < 2; ++a) {
    std::fill(std::begin(p.tap[a]), std::end(p.tap[a]), -1);
    for (size_t t = 0; t < phases[a].offsets.size(); ++t) {
      const int64_t r = phases[a].offsets[t] - phases[a].q_begin - p.e_min;
      p.mask[a] |= 1u << r;
      p.tap[a][r] = static_cast<int>(t);
    }
  }
  p.ok = true;
  return p;
}

int pattern_of(const AxisPlan& p) {
  for (size_t i = 0; i < std::size(kPixelLanesAxisPatterns); ++i) {
    const PixelLanesAxisPattern& k = kPixelLanesAxisPatterns[i];
    if (k.phase0 == p.mask[0] && k.phase1 == p.mask[1] && k.span == p.span) return static_cast<int>(i);
  }
  return -1;
}

// Calls f(r, c, a, b) for every (phase, tap) pair in the kernels' slot order.
template <typename F>
void for_each_pair(const PixelLanesPlan& plan, F&& f) {
  for (int r = 0; r < plan.span_h; ++r)
    for (int c = 0; c < plan.span_w; ++c)
      for (int a = 0; a < 2; ++a)
        if ((plan.mask_h[a] >> r) & 1)
          for (int b = 0; b < 2; ++b)
            if ((plan.mask_w[b] >> c) & 1) f(r, c, a, b);
}

// The transposed input rows one thread holds: slot = row key mod ring_rows, so the
// span_h consecutive rows a phase row reads are all present at once.
class RowRing {
 public:
  RowRing(const PixelLanesPlan& plan, const PixelLanesUkernel& uk, const ConvShape& s, const float* x, float* storage)
      : plan_(plan), uk_(uk), s_(s), x_(x), storage_(storage) {
    tags_.fill(-1);
    // The padding right of each plane row's data, through the next plane's left halo,
    // is zeroed once here (a transpose of no pixels writes just zeros); transposes of
    // input rows then rewrite only the data. Then each slot's first left halo.
    for (int64_t slot = 0; slot < plan.ring_rows; ++slot) {
      float* planes = storage + slot * plan.cin * plan.plane_stride;
      uk.transpose(nullptr, 0, plan.cin, planes + plan.halo + plan.data_floats, plan.plane_stride, plan.plane_stride - plan.data_floats);
      for (int64_t i = 0; i < plan.halo; ++i) planes[i] = 0.f;
    }
  }

  // Planes of input row ih of image img (transposed here if not yet held), or the
  // zero plane for rows outside the image. Points at (channel 0, column 0).
  const float* row(int64_t img, int64_t ih) {
    if (ih < 0 || ih >= s_.h.in) return kZeroRow + plan_.halo;
    const int64_t key = img * s_.h.in + ih;
    const size_t slot = static_cast<size_t>(key % plan_.ring_rows);
    float* planes = storage_ + static_cast<int64_t>(slot) * plan_.cin * plan_.plane_stride;
    if (tags_[slot] != key) {
      uk_.transpose(x_ + key * s_.w.in * plan_.cin, s_.w.in, plan_.cin, planes + plan_.halo, plan_.plane_stride, plan_.data_floats);
      tags_[slot] = key;
    }
    return planes + plan_.halo;
  }

 private:
  const PixelLanesPlan& plan_;
  const PixelLanesUkernel& uk_;
  const ConvShape& s_;
  const float* x_;
  float* storage_;
  std::array<int64_t, kPixelLanesMaxSpan + 1> tags_;
};

// The blocks of one image, row-major: block i is positions [16 * (i % per_row), +16)
// of phase row i / per_row. A task is two consecutive blocks (two of one row, or the
// last of one row and the first of the next), the micro-kernel's register tile.
struct BlockGrid {
  int64_t per_row = 0, per_image = 0, tiles_per_image = 0;
  explicit BlockGrid(const PixelLanesPlan& plan)
      : per_row((plan.cols + kPixelLanesWidth - 1) / kPixelLanesWidth),
        per_image(plan.rows * per_row),
        tiles_per_image((per_image + kPixelLanesMaxBlocks - 1) / kPixelLanesMaxBlocks) {}
};

// Writes one block's sums plus bias to its output pixels in both output rows (one per
// h-phase), then applies the activation to those contiguous pixels.
void store_block(const ConvShape& s, const ConvTranspose2DWeights& wts, const PixelLanesPlan& plan, const PixelLanesUkernel& uk,
                 const float* acc, int blocks, int p, int64_t img, int64_t t, int64_t j0, float* y, const Epilogue& ep) {
  const int64_t cout = plan.cout, n = std::min<int64_t>(kPixelLanesWidth, plan.cols - j0);
  const int64_t channel_stride = blocks * kPixelLanesWidth;
  // Phase b's position j is output column output_of(q_begin + j). Both phases have
  // plan.cols positions and together cover the 2 * cols output columns, so their
  // columns alternate: `first` starts at the lower one, the other one column after.
  int64_t col[2];
  for (size_t b = 0; b < 2; ++b) col[b] = wts.phases_w[b].output_of(wts.phases_w[b].q_begin + j0, s.w);
  const size_t first = col[0] < col[1] ? 0 : 1;
  for (size_t a = 0; a < 2; ++a) {
    const AxisPhase& ph = wts.phases_h[a];
    float* row = y + (img * s.h.out + ph.output_of(ph.q_begin + t, s.h)) * s.w.out * cout;
    const float* phase_acc[2];
    for (size_t b = 0; b < 2; ++b) phase_acc[b] = acc + (a * 2 + b) * static_cast<size_t>(cout * channel_stride) + static_cast<size_t>(p) * kPixelLanesWidth;
    float* out = row + col[first] * cout;
    if (n == kPixelLanesWidth) {
      uk.interleave(phase_acc[first], phase_acc[1 - first], channel_stride, plan.cout, ep.bias, out);
    } else {  // a partial last block
      for (size_t b = 0; b < 2; ++b)
        for (int64_t co = 0; co < cout; ++co) {
          const float bias = ep.bias ? ep.bias[co] : 0.f;
          for (int64_t j = 0; j < n; ++j) row[(col[b] + j * s.w.stride) * cout + co] = phase_acc[b][co * channel_stride + j] + bias;
        }
    }
    if (ep.activation == Activation::kPRelu) apply_activation(out, 2 * n, cout, cout, ep.activation, ep.alpha, ep.beta, ep.slope);  // per channel
    else uk.activate(out, 2 * n * cout, ep.activation, ep.alpha, ep.beta);
  }
}

// Task `tile` of image img: its one or two blocks through the micro-kernel, then out.
void pixel_lanes_tile(const ConvShape& s, const ConvTranspose2DWeights& wts, const PixelLanesPlan& plan, const BlockGrid& grid,
                      const PixelLanesUkernel& uk, const float* packed, RowRing& ring, float* y, const Epilogue& ep,
                      int64_t img, int64_t tile) {
  PixelLanesArgs args;
  args.cin = plan.cin;
  args.plane_stride = plan.plane_stride;
  args.weights = packed;
  const int64_t first = tile * kPixelLanesMaxBlocks;
  args.blocks = static_cast<int>(std::min<int64_t>(kPixelLanesMaxBlocks, grid.per_image - first));
  int64_t t[kPixelLanesMaxBlocks], j0[kPixelLanesMaxBlocks];
  for (int p = 0; p < args.blocks; ++p) {
    t[p] = (first + p) / grid.per_row, j0[p] = (first + p) % grid.per_row * kPixelLanesWidth;
    for (int r = 0; r < plan.span_h; ++r) args.rows[p][r] = ring.row(img, t[p] - (plan.e_min_h + r)) - plan.e_min_w + j0[p];
  }
  alignas(64) float acc[2 * 2 * kPixelLanesMaxChannels * kPixelLanesMaxBlocks * kPixelLanesWidth];
  args.acc = acc;
  uk.run(plan, args);
  for (int p = 0; p < args.blocks; ++p) store_block(s, wts, plan, uk, acc, args.blocks, p, img, t[p], j0[p], y, ep);
}

}  // namespace

PixelLanesPlan plan_pixel_lanes(const ConvShape& s, const std::vector<AxisPhase>& phases_h,
                                const std::vector<AxisPhase>& phases_w) {
  PixelLanesPlan plan;
  if (s.out_channels < 1 || s.out_channels > kPixelLanesMaxChannels || s.in_channels < 1) return plan;
  const AxisPlan h = plan_axis(s.h, phases_h), w = plan_axis(s.w, phases_w);
  if (!h.ok || !w.ok || w.positions < kPixelLanesWidth) return plan;
  plan.pattern = pattern_of(h);
  if (plan.pattern < 0 || pattern_of(w) != plan.pattern) return plan;
  plan.cout = static_cast<int>(s.out_channels);
  plan.cin = s.in_channels;
  plan.span_h = h.span, plan.span_w = w.span;
  plan.e_min_h = h.e_min, plan.e_min_w = w.e_min;
  for (size_t a = 0; a < 2; ++a) {
    plan.mask_h[a] = h.mask[a], plan.mask_w[a] = w.mask[a];
    std::copy(std::begin(h.tap[a]), std::end(h.tap[a]), plan.tap_h[a]);
    std::copy(std::begin(w.tap[a]), std::end(w.tap[a]), plan.tap_w[a]);
  }
  plan.rows = h.positions, plan.cols = w.positions;
  int64_t pair_count = 0;
  for_each_pair(plan, [&](int, int, int, int) { ++pair_count; });
  plan.slots = pair_count * plan.cout;
  // Lane l of a block at position j0 reads column j0 + l - e for e in [e_min, e_max]:
  // from -e_max up to the last block's end - 1 - e_min.
  const int64_t e_max_w = w.e_min + w.span - 1;
  plan.halo = std::max<int64_t>(0, e_max_w);
  const int64_t right = std::max(round_up(s.w.in, kPixelLanesWidth), round_up(w.positions, kPixelLanesWidth) - std::min<int64_t>(0, w.e_min));
  plan.plane_stride = round_up(plan.halo + right, kPixelLanesWidth);
  plan.data_floats = round_up(s.w.in, kPixelLanesWidth);
  // (Zeroing a slot's padding writes up to the next plane's halo: for the last plane,
  // halo floats past the ring, which each thread's workspace share includes.)
  plan.ring_rows = h.span + 1;  // a tile's two blocks may lie in consecutive rows
  if (plan.ring_floats() + plan.halo > kMaxRingFloats || plan.cin * plan.plane_stride > kZeroRowFloats) return plan;
  plan.ok = true;
  return plan;
}

void pack_pixel_lanes_weights(const ConvShape& s, const ConvTranspose2DWeights& wts, const PixelLanesPlan& plan, float* out) {
  const PanelLayout layout = wts.tap_layout(s);
  const int64_t cin = s.in_channels, cout = s.out_channels;
  for (int64_t ci = 0; ci < cin; ++ci) {
    float* dst = out + ci * plan.slots;
    for_each_pair(plan, [&](int r, int c, int a, int b) {
      const int64_t taps_w = static_cast<int64_t>(wts.phases_w[static_cast<size_t>(b)].taps.size());
      const int64_t tap = plan.tap_h[a][r] * taps_w + plan.tap_w[b][c], phase = a * 2 + b;
      for (int64_t co = 0; co < cout; ++co) {
        const int64_t i = tap * cin * cout + layout.index(ci, co);
        *dst++ = wts.fp16() ? half_to_float(wts.sub_kernels_f16[static_cast<size_t>(phase)][i])
                            : wts.sub_kernels[static_cast<size_t>(phase)][i];
      }
    });
  }
}

bool pixel_lanes_available(const PixelLanesPlan& plan) { return plan.ok && pixel_lanes_ukernel().run != nullptr; }

namespace {
// One thread's share of the workspace: its ring, plus the halo floats that zeroing
// the last plane's padding writes past it, in whole cache lines.
int64_t ring_slot_floats(const PixelLanesPlan& plan) { return round_up(plan.ring_floats() + plan.halo, kPixelLanesWidth); }
}  // namespace

int64_t pixel_lanes_workspace_floats(const PixelLanesPlan& plan, int threads) {
  return std::max(1, threads) * ring_slot_floats(plan) + kPixelLanesWidth;  // + alignment slack
}

void conv_transpose2d_pixel_lanes(const ConvShape& s, const ConvTranspose2DWeights& wts, const PixelLanesPlan& plan,
                                  const float* packed, const float* x, float* y, const Epilogue& ep, int threads,
                                  float* workspace) {
  const PixelLanesUkernel& uk = pixel_lanes_ukernel();
  const BlockGrid grid(plan);
  const int64_t tasks = s.batch * grid.tiles_per_image;
  // The rings start on a cache line (vector loads of a plane row then split no more
  // lines than the halo makes them).
  const auto misalign = reinterpret_cast<uintptr_t>(workspace) % 64;
  float* rings = workspace + (misalign ? (64 - misalign) / sizeof(float) : 0);
  const int64_t slot = ring_slot_floats(plan);
  // Each thread walks a contiguous run of tiles, so consecutive tiles reuse its ring's
  // transposed input rows; tiles write disjoint pixels: no barrier, no reduction.
  TaskRuns runs(tasks, std::max(1, threads));
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    RowRing ring(plan, uk, s, x, rings + thread_index() * slot);
    for (int64_t task; (task = runs.next(thread_index())) >= 0;)
      pixel_lanes_tile(s, wts, plan, grid, uk, packed, ring, y, ep, task / grid.tiles_per_image, task % grid.tiles_per_image);
  }
}

}  // namespace edgegan::cpu
