#include "kernels_cpu/conv_transpose2d/conv_transpose2d_phase_lanes.h"

#include <algorithm>
#include <array>
#include <cstdint>

#include "kernels_cpu/common/half.h"
#include "kernels_cpu/common/task_runs.h"
#include "kernels_cpu/common/thread_index.h"
#include "kernels_cpu/phase_lanes/phase_lanes_ukernel.h"
#include "kernels_cpu/pixel_lanes/pixel_lanes_ukernel.h"

namespace edgegan::cpu {
namespace {

// A thread's ring of transposed rows stays at most this large (L2 and a share of
// L3); layers whose rows are wider take the other paths.
constexpr int64_t kMaxRingFloats = int64_t{1} << 20;  // 4 MiB

constexpr int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// The union of an axis's phases' positions, and the span of their tap offsets;
// false when a phase's taps reach further than the micro-kernel's span.
bool axis_extent(const std::vector<AxisPhase>& phases, int64_t& q_lo, int64_t& q_hi, int& span) {
  q_lo = INT64_MAX, q_hi = INT64_MIN;
  int64_t max_offset = 0;
  for (const AxisPhase& p : phases) {
    if (p.q_end > p.q_begin) q_lo = std::min(q_lo, p.q_begin), q_hi = std::max(q_hi, p.q_end);
    for (int64_t off : p.offsets) max_offset = std::max(max_offset, off);
  }
  if (max_offset >= kPhaseLanesMaxSpan) return false;
  span = static_cast<int>(max_offset + 1);
  return true;
}

// Positions per micro-kernel call in a pass of `n` outputs.
int64_t group_positions(const PhaseLanesUkernel& uk, int64_t n) { return int64_t{uk.blocks[n - 1]} * uk.width; }

// The transposed input rows one thread holds: row ih in slot ih mod span_h, so the
// span_h rows a phase-grid row reads are all present at once.
class PlaneRing {
 public:
  PlaneRing(const PhaseLanesPlan& plan, const ConvShape& s, const float* x, float* storage)
      : plan_(plan), s_(s), x_(x), storage_(storage) {
    tags_.fill(-1);
    // Zero once: the transposes rewrite only each plane's data columns.
    std::fill(storage, storage + plan.ring_floats(), 0.f);
    const PixelLanesUkernel& lanes = pixel_lanes_ukernel(Isa::kAvx512);
    if (plan.isa == Isa::kAvx512 && lanes.transpose) transpose_ = lanes.transpose;
  }

  // Planes of input row ih of image img, at column 0 of channel 0 (nullptr outside the image).
  const float* row(int64_t img, int64_t ih) {
    if (ih < 0 || ih >= s_.h.in) return nullptr;
    const int64_t key = img * s_.h.in + ih;
    const size_t slot = static_cast<size_t>(key % plan_.span_h);
    float* planes = storage_ + static_cast<int64_t>(slot) * plan_.cin * plan_.plane_stride + plan_.left;
    if (tags_[slot] != key) {
      const float* src = x_ + key * s_.w.in * plan_.cin;
      if (transpose_) {
        transpose_(src, s_.w.in, plan_.cin, planes, plan_.plane_stride, round_up(s_.w.in, 16));
      } else {
        for (int64_t p = 0; p < s_.w.in; ++p)
          for (int64_t c = 0; c < plan_.cin; ++c) planes[c * plan_.plane_stride + p] = src[p * plan_.cin + c];
      }
      tags_[slot] = key;
    }
    return planes;
  }

 private:
  const PhaseLanesPlan& plan_;
  const ConvShape& s_;
  const float* x_;
  float* storage_;
  PlanesFromPixelsFn transpose_ = nullptr;  // the AVX-512 16x16 transpose where the family is AVX-512
  std::array<int64_t, kPhaseLanesMaxSpan> tags_;
};

// One task: phase-grid row qh of image img, every pass, then the epilogue's end over
// the output rows it made.
void phase_lanes_row(const ConvShape& s, const ConvTranspose2DWeights& wts, const PhaseLanesPlan& plan, const PhaseLanesUkernel& uk,
                     const float* packed, PlaneRing& ring, float* y, const Epilogue& ep, int64_t img, int64_t qh) {
  const int64_t cout = plan.cout, sw = s.w.stride, row_floats = s.w.out * cout;
  PhaseLanesArgs args;
  args.cin = plan.cin;
  args.plane_stride = plan.plane_stride;
  args.span_h = plan.span_h;
  args.span_w = plan.span_w;
  const float* planes[kPhaseLanesMaxSpan];
  for (int t = 0; t < plan.span_h; ++t) planes[t] = ring.row(img, qh - t);
  // Output row of each h-phase at this qh (nullptr: the phase has no output row here).
  std::array<float*, 16> out_rows{};
  for (size_t a = 0; a < wts.phases_h.size(); ++a) {
    const AxisPhase& ph = wts.phases_h[a];
    if (qh >= ph.q_begin && qh < ph.q_end) out_rows[a] = y + (img * s.h.out + ph.output_of(qh, s.h)) * row_floats;
  }
  alignas(64) float acc[kPhaseLanesMaxOutputs * 8 * 16];
  args.acc = acc;
  const float* weights = packed;
  for (int64_t pass = 0; pass < plan.passes(); ++pass) {
    const int64_t o0 = plan.pass_begin[static_cast<size_t>(pass)], n = plan.pass_begin[static_cast<size_t>(pass) + 1] - o0;
    const int64_t group = group_positions(uk, n);
    const PhaseLanesFn run = uk.run[n - 1];
    args.weights = weights;
    for (int64_t q0 = plan.qw_lo; q0 < plan.qw_hi; q0 += group) {
      for (int t = 0; t < plan.span_h; ++t) args.rows[t] = planes[t] ? planes[t] + q0 : nullptr;
      run(args);
      // Each output's sums to its strided output pixels, plus bias.
      for (int64_t i = 0; i < n; ++i) {
        const int64_t o = o0 + i, phase = o / cout, co = o % cout;
        float* row = out_rows[static_cast<size_t>(phase / sw)];
        if (!row) continue;
        const AxisPhase& pw = wts.phases_w[static_cast<size_t>(phase % sw)];
        const int64_t q_begin = std::max(q0, pw.q_begin), q_end = std::min(q0 + group, pw.q_end);
        if (q_end <= q_begin) continue;
        const float bias = ep.bias ? ep.bias[co] : 0.f;
        const float* sums = acc + i * group + (q_begin - q0);
        float* dst = row + pw.output_of(q_begin, s.w) * cout + co;
        for (int64_t j = 0; j < q_end - q_begin; ++j) dst[j * sw * cout] = sums[j] + bias;
      }
    }
    weights += plan.cin * plan.span_h * plan.span_w * n;
  }
  for (size_t a = 0; a < wts.phases_h.size(); ++a)
    if (float* row = out_rows[a]) finish_epilogue(row, (row - y) / cout, s.w.out, cout, ep);
}

}  // namespace

PhaseLanesPlan plan_phase_lanes(const ConvShape& s, const std::vector<AxisPhase>& phases_h, const std::vector<AxisPhase>& phases_w) {
  PhaseLanesPlan plan;
  if (s.out_channels < 1 || s.out_channels > kPhaseLanesMaxChannels || s.in_channels < 1) return plan;
  if (s.h.stride > kPhaseLanesMaxStride || s.w.stride > kPhaseLanesMaxStride) return plan;
  if (!axis_extent(phases_h, plan.qh_lo, plan.qh_hi, plan.span_h) || !axis_extent(phases_w, plan.qw_lo, plan.qw_hi, plan.span_w)) return plan;
  if (plan.qh_hi <= plan.qh_lo || plan.qw_hi <= plan.qw_lo) return plan;
  const PhaseLanesUkernel& uk = phase_lanes_ukernel();
  plan.isa = uk.isa;
  plan.cin = s.in_channels;
  plan.cout = s.out_channels;
  plan.outputs = static_cast<int64_t>(phases_h.size() * phases_w.size()) * plan.cout;
  // Passes of equal size (a stride-3 RGB head's 27 outputs: 14 + 13, not 16 + 11).
  const int64_t passes = (plan.outputs + uk.max_outputs - 1) / uk.max_outputs;
  if (passes > kPhaseLanesMaxPasses) return plan;  // (never with these limits and a family of 8+ outputs)
  plan.pass_count = passes;
  for (int64_t i = 0; i <= passes; ++i) plan.pass_begin[static_cast<size_t>(i)] = plan.outputs * i / passes;
  // Lane l of a call at q0 reads plane column q0 + l - u: from qw_lo - (span_w - 1)
  // to the last call's end, which may pass qw_hi.
  plan.left = std::max<int64_t>(0, plan.span_w - 1 - plan.qw_lo);
  int64_t right = round_up(s.w.in, 16);
  for (int64_t i = 0; i < passes; ++i) {
    const int64_t group = group_positions(uk, plan.pass_begin[static_cast<size_t>(i) + 1] - plan.pass_begin[static_cast<size_t>(i)]);
    right = std::max(right, plan.qw_lo + round_up(plan.qw_hi - plan.qw_lo, group));
  }
  plan.plane_stride = round_up(plan.left + right, 16);
  if (plan.ring_floats() > kMaxRingFloats) return plan;
  plan.ok = true;
  return plan;
}

void pack_phase_lanes_weights(const ConvShape& s, const ConvTranspose2DWeights& wts, const PhaseLanesPlan& plan, float* out) {
  const PanelLayout layout = wts.tap_layout(s);
  const int64_t cin = s.in_channels, cout = s.out_channels, sw = s.w.stride;
  for (int64_t pass = 0; pass < plan.passes(); ++pass) {
    const int64_t o0 = plan.pass_begin[static_cast<size_t>(pass)], n = plan.pass_begin[static_cast<size_t>(pass) + 1] - o0;
    float* dst = out;
    std::fill(dst, dst + cin * plan.span_h * plan.span_w * n, 0.f);  // taps a phase lacks stay 0
    for (int64_t i = 0; i < n; ++i) {
      const int64_t o = o0 + i, phase = o / cout, co = o % cout;
      const AxisPhase& ph = wts.phases_h[static_cast<size_t>(phase / sw)];
      const AxisPhase& pw = wts.phases_w[static_cast<size_t>(phase % sw)];
      const int64_t taps_w = static_cast<int64_t>(pw.taps.size());
      for (size_t th = 0; th < ph.taps.size(); ++th)
        for (size_t tw = 0; tw < pw.taps.size(); ++tw) {
          const int64_t tap = static_cast<int64_t>(th) * taps_w + static_cast<int64_t>(tw);
          for (int64_t ci = 0; ci < cin; ++ci) {
            const int64_t src = tap * cin * cout + layout.index(ci, co);
            const float v = wts.fp16() ? half_to_float(wts.sub_kernels_f16[static_cast<size_t>(phase)][src])
                                       : wts.sub_kernels[static_cast<size_t>(phase)][src];
            dst[((ci * plan.span_h + ph.offsets[th]) * plan.span_w + pw.offsets[tw]) * n + i] = v;
          }
        }
    }
    out += cin * plan.span_h * plan.span_w * n;
  }
}

namespace {
int64_t ring_slot_floats(const PhaseLanesPlan& plan) { return round_up(plan.ring_floats(), 16); }
}  // namespace

int64_t phase_lanes_workspace_floats(const PhaseLanesPlan& plan, int threads) {
  return std::max(1, threads) * ring_slot_floats(plan) + 16;  // + alignment slack
}

void conv_transpose2d_phase_lanes(const ConvShape& s, const ConvTranspose2DWeights& wts, const PhaseLanesPlan& plan,
                                  const float* packed, const float* x, float* y, const Epilogue& ep, int threads,
                                  float* workspace) {
  const PhaseLanesUkernel& uk = phase_lanes_ukernel(plan.isa);
  const int64_t rows = plan.qh_hi - plan.qh_lo, tasks = s.batch * rows;
  const auto misalign = reinterpret_cast<uintptr_t>(workspace) % 64;
  float* rings = workspace + (misalign ? (64 - misalign) / sizeof(float) : 0);
  // Each thread walks a contiguous run of rows, so consecutive rows reuse its ring's
  // transposed input rows; rows write disjoint output rows: no barrier, no reduction.
  TaskRuns runs(tasks, std::max(1, threads));
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    PlaneRing ring(plan, s, x, rings + thread_index() * ring_slot_floats(plan));
    for (int64_t task; (task = runs.next(thread_index())) >= 0;)
      phase_lanes_row(s, wts, plan, uk, packed, ring, y, ep, task / rows, plan.qh_lo + task % rows);
  }
}

}  // namespace edgegan::cpu
