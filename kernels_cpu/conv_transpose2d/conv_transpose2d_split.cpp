#include <algorithm>
#include <array>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "kernels_cpu/conv_transpose2d/conv_transpose2d_split.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_phase_lanes.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_pixel_lanes.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_winograd.h"
#include "kernels_cpu/gemm/gemm.h"
#include "kernels_cpu/dot/dot_ukernel.h"
#include "kernels_cpu/gemm/gemm_ukernel.h"
#include "kernels_cpu/common/half.h"
#include "kernels_cpu/common/half_convert.h"
#include "kernels_cpu/conv_transpose2d/output_prefetch.h"
#include "kernels_cpu/common/tap_gather.h"
#include "kernels_cpu/common/inline_array.h"
#include "kernels_cpu/common/task_runs.h"
#include "kernels_cpu/activation/activation.h"
#include "kernels_cpu/common/workspace.h"

namespace edgegan::cpu {
namespace {

// A task is one (phase, tile of that phase's output pixels over the whole batch,
// block of output channels). Tiles span rows and images, so a 4x4 input with
// 1024 channels still yields enough tasks for every thread; every output pixel
// belongs to exactly one phase and tile, so tasks write disjoint memory (no
// atomics, no reduction, results independent of the thread count).
constexpr int64_t kTilePixels = 32;
constexpr int64_t kMaxColBlock = 64;  // output channels per task: two tiles of the widest micro-kernel (8x32)

// The narrow paths (at most 4 output channels) take heads of at most this many
// weights: the dot path transposes them once per call into its workspace. 64 KiB
// covers every RGB/grey head of the benchmark models (k5, 128 channels in: 9600 floats).
constexpr int64_t kNarrowWeightFloats = 16384;
constexpr int64_t kNarrowMaxTaps = 64;  // taps of one phase, at most kh*kw

struct PhaseGrid {
  int64_t rows = 0, cols = 0;  // q extent of the phase along h and w
  int64_t pixels(int64_t batch) const { return batch * rows * cols; }
};

PhaseGrid grid_of(const AxisPhase& ph, const AxisPhase& pw) {
  return {std::max<int64_t>(0, ph.q_end - ph.q_begin), std::max<int64_t>(0, pw.q_end - pw.q_begin)};
}

// One tile's pixels: image, phase coordinates, and output row pointer (at the
// first channel of the task's block); YT: float, or an fp16 session's halves.
template <typename YT>
struct Tile {
  int64_t count = 0;
  std::array<int64_t, kTilePixels> img, qh, qw;
  std::array<YT*, kTilePixels> out;
  int64_t qh_lo = INT64_MAX, qh_hi = INT64_MIN, qw_lo = INT64_MAX, qw_hi = INT64_MIN;  // the pixels' q span, inclusive
};

template <typename YT>
Tile<YT> load_tile(const ConvShape& s, const AxisPhase& ph, const AxisPhase& pw, const PhaseGrid& g, int64_t p0, int64_t p1,
                   YT* y, int64_t j0) {
  Tile<YT> t;
  t.count = p1 - p0;
  // Divide once for the first pixel, then step along the row (divisions per pixel
  // measured 9% of a 128x128x64 layer).
  const int64_t per_image = g.rows * g.cols;
  int64_t img = p0 / per_image, row = p0 % per_image / g.cols, col = p0 % g.cols;
  for (size_t i = 0; i < static_cast<size_t>(t.count); ++i) {
    t.img[i] = img;
    t.qh[i] = ph.q_begin + row;
    t.qw[i] = pw.q_begin + col;
    t.out[i] = y + ((img * s.h.out + ph.output_of(t.qh[i], s.h)) * s.w.out + pw.output_of(t.qw[i], s.w)) * s.out_channels + j0;
    t.qh_lo = std::min(t.qh_lo, t.qh[i]), t.qh_hi = std::max(t.qh_hi, t.qh[i]);
    t.qw_lo = std::min(t.qw_lo, t.qw[i]), t.qw_hi = std::max(t.qw_hi, t.qw[i]);
    if (++col == g.cols) {
      col = 0;
      if (++row == g.rows) row = 0, ++img;
    }
  }
  return t;
}

// Collects the tile pixels whose input for tap (off_h, off_w) lies inside the image
// (the others' taps are trimmed: skipped, never multiplied as zeros): their input rows
// and output rows, packed from the front. Branch-free (every pixel is written, only
// valid ones advance), since on tile borders the valid set alternates unpredictably.
// Halves (an fp16 session's input) are widened as they are gathered, each valid pixel's
// row into `wide` (kTilePixels rows of Cin floats), which a_rows then point at.
template <typename XT, typename YT>
inline int64_t tap_rows(const ConvShape& s, const XT* x, const Tile<YT>& t, float* const* acc_rows, int64_t off_h, int64_t off_w,
                        const float** a_rows, float** c_rows, float* wide) {
  int64_t m = 0;
  for (size_t i = 0; i < static_cast<size_t>(t.count); ++i) {
    const int64_t ih = t.qh[i] - off_h, iw = t.qw[i] - off_w;
    const bool valid = static_cast<uint64_t>(ih) < static_cast<uint64_t>(s.h.in) && static_cast<uint64_t>(iw) < static_cast<uint64_t>(s.w.in);
    // Offsets of invalid pixels are never dereferenced; clamp them into the image anyway.
    const int64_t offset = valid ? ((t.img[i] * s.h.in + ih) * s.w.in + iw) * s.in_channels : 0;
    if constexpr (std::is_same_v<XT, float>) {
      a_rows[m] = x + offset;
    } else {
      a_rows[m] = wide + m * s.in_channels;
      if (valid) widen_halves(x + offset, wide + m * s.in_channels, s.in_channels);
    }
    c_rows[m] = acc_rows[i];
    m += valid;
  }
  return m;
}

inline void rows_gemm(int64_t m, int64_t n, int64_t k, const float* const* a, const float* b, int64_t ldb, float* const* c) {
  gemm_accumulate_rows(m, n, k, a, b, ldb, c);
}
inline void rows_gemm(int64_t m, int64_t n, int64_t k, const float* const* a, const uint16_t* b, int64_t ldb, float* const* c) {
  gemm_accumulate_rows_f16w(m, n, k, a, b, ldb, c);
}
inline float weight_value(float w) { return w; }
inline float weight_value(uint16_t w) { return half_to_float(w); }

// The phase's tap that goes last: the one whose input lies inside the image for the
// most of the phase's positions (the first such in tap order), the others in tap
// order before it. Fixed per phase, so every pixel's sum is added in the same order
// whatever tile (batch, thread count) it falls in.
int64_t last_tap_of(const ConvShape& s, const AxisPhase& ph, const AxisPhase& pw) {
  auto inside = [](const AxisPhase& p, int64_t off, int64_t in) {  // positions q of the phase with 0 <= q - off < in
    return std::max<int64_t>(0, std::min(p.q_end, off + in) - std::max(p.q_begin, off));
  };
  const int64_t taps_w = static_cast<int64_t>(pw.taps.size());
  int64_t best = 0, best_count = -1;
  for (size_t th = 0; th < ph.taps.size(); ++th)
    for (int64_t tw = 0; tw < taps_w; ++tw) {
      const int64_t count = inside(ph, ph.offsets[th], s.h.in) * inside(pw, pw.offsets[static_cast<size_t>(tw)], s.w.in);
      if (count > best_count) best_count = count, best = static_cast<int64_t>(th) * taps_w + tw;
    }
  return best;
}

// GEMM path: per tap, the tile's valid pixels times the tap's [Cin][Cout] slice
// (an indirect GEMM over their row pointers), accumulated in the tile's scratch rows,
// one weight panel at a time (each a contiguous [Cin][width] block). The sub-kernel is
// float or fp16 (WT). With `store` (the layer's epilogue, where the fused store
// applies: float weights), the phase's last tap runs on the fused store kernel: when
// every pixel of the tile has that tap, straight to the output rows with the
// epilogue, and the function returns true; otherwise back into the scratch rows (the
// same rounding), which the caller then stores.
// `last` is last_tap_of(s, ph, pw), found once per call. Halves in (XT) take no
// `store` and `wide` is their rows' scratch (tap_rows).
template <typename WT, typename XT, typename YT>
bool tile_gemm(const ConvShape& s, const PanelLayout& layout, const AxisPhase& ph, const AxisPhase& pw, const WT* sub,
               const XT* x, const Tile<YT>& t, float* const* acc_rows, int64_t j0, int64_t width, int64_t last,
               const Epilogue* store, float* wide) {
  const int64_t cin = s.in_channels, cout = s.out_channels, taps_w = static_cast<int64_t>(pw.taps.size());
  const int64_t ntaps = static_cast<int64_t>(ph.taps.size()) * taps_w;
  if (ntaps == 0) return false;
  const int64_t last_h = ph.offsets[static_cast<size_t>(last / taps_w)], last_w = pw.offsets[static_cast<size_t>(last % taps_w)];
  const bool fused = store && t.qh_lo - last_h >= 0 && t.qh_hi - last_h < s.h.in && t.qw_lo - last_w >= 0 && t.qw_hi - last_w < s.w.in;
  std::array<const float*, kTilePixels> a_rows;
  std::array<float*, kTilePixels> c_rows, out_rows;
  for (int64_t i = 0; i < ntaps; ++i) {
    const int64_t tap = i < last ? i : i < ntaps - 1 ? i + 1 : last;  // tap order with `last` moved to the end
    const int64_t m = tap_rows(s, x, t, acc_rows, ph.offsets[static_cast<size_t>(tap / taps_w)],
                               pw.offsets[static_cast<size_t>(tap % taps_w)], a_rows.data(), c_rows.data(), wide);
    const WT* tap_weights = sub + tap * cin * cout;
    const bool through_store = store && tap == last, to_output = through_store && fused;
    // To the output: m == t.count, and c_rows are acc_rows in pixel order, so pixel p goes to t.out[p].
    if constexpr (std::is_same_v<YT, float>) {
      if (to_output)
        for (size_t p = 0; p < static_cast<size_t>(m); ++p) out_rows[p] = t.out[p];
    }
    float* const* out = to_output ? out_rows.data() : c_rows.data();
    int64_t at = j0;  // the column c_rows (and out_rows) point at
    for (int64_t n0 = j0; n0 < j0 + width;) {
      const int64_t n = std::min(j0 + width, layout.panel_end(n0)) - n0;
      for (size_t p = 0; p < static_cast<size_t>(m); ++p) c_rows[p] += n0 - at;
      if (to_output)
        for (size_t p = 0; p < static_cast<size_t>(m); ++p) out_rows[p] += n0 - at;
      at = n0;
      const WT* panel = tap_weights + layout.index(0, n0);
      if (through_store) {
        if constexpr (std::is_same_v<WT, float>) {  // (fp16 layers get no `store`)
          Epilogue ep;  // back into scratch: the sums only
          if (to_output) {
            ep = store->from_column(n0);
          }
          gemm_store_rows(m, n, cin, a_rows.data(), panel, layout.width(n0), c_rows.data(), out, ep);
        }
      } else {
        rows_gemm(m, n, cin, a_rows.data(), panel, layout.width(n0), c_rows.data());
      }
      n0 += n;
    }
  }
  return fused;
}

// Narrow path, one phase row of one image per call: every tap of a pixel in one
// dot-kernel call, reduced once. Columns whose every tap lies inside the image go
// in one call (their inputs are consecutive pixels); the border columns one by
// one with only their valid taps. Adds the products to the output row `out_row` (pixel
// 0 of the row; it holds the bias). `x` holds the image's input rows from `row_lo` on.
void row_dot(const ConvShape& s, const DotUkernel& dot, const AxisPhase& ph, const AxisPhase& pw,
             const float* transposed, const float* x, int64_t row_lo, float* out_row, int64_t qh) {
  const int64_t cin = s.in_channels, cout = s.out_channels, taps_w = static_cast<int64_t>(pw.taps.size());
  const int nr = static_cast<int>(cout);
  const int64_t q_lo = pw.q_begin, q_hi = pw.q_end, ldc = s.w.stride * cout;
  float* row = out_row + pw.output_of(q_lo, s.w) * cout;

  // Taps of this row: valid along h, then every w tap; a[] is the input offset (in
  // floats) that column q = 0 would read, so column q reads x + a[t] + q * cin.
  std::array<int64_t, kNarrowMaxTaps> a;
  std::array<const float*, kNarrowMaxTaps> bt;
  std::array<int64_t, kNarrowMaxTaps> off_w;
  int ntaps = 0;
  for (size_t th = 0; th < ph.taps.size(); ++th) {
    const int64_t ih = qh - ph.offsets[th];
    if (ih < 0 || ih >= s.h.in) continue;
    for (int64_t tw = 0; tw < taps_w; ++tw) {
      off_w[static_cast<size_t>(ntaps)] = pw.offsets[static_cast<size_t>(tw)];
      a[static_cast<size_t>(ntaps)] = ((ih - row_lo) * s.w.in - pw.offsets[static_cast<size_t>(tw)]) * cin;
      bt[static_cast<size_t>(ntaps++)] = transposed + (static_cast<int64_t>(th) * taps_w + tw) * cout * cin;
    }
  }
  if (ntaps > 0) {
    // Offsets increase along the taps, so columns [full_lo, full_hi) have every w tap inside.
    const int64_t full_lo = std::max(q_lo, pw.offsets.back()), full_hi = std::min(q_hi, s.w.in + pw.offsets.front());
    std::array<const float*, kNarrowMaxTaps> a_q, bt_q;
    for (int64_t q = q_lo; q < q_hi;) {
      float* c = row + (q - q_lo) * ldc;
      if (q >= full_lo && q < full_hi) {  // the whole run of full columns in one call
        const int mr = static_cast<int>(full_hi - q);
        for (int t = 0; t < ntaps; ++t) a_q[static_cast<size_t>(t)] = x + (a[static_cast<size_t>(t)] + q * cin);
        dot.run(cin, ntaps, mr, nr, a_q.data(), cin, bt.data(), c, ldc);
        q += mr;
        continue;
      }
      int valid = 0;
      for (int t = 0; t < ntaps; ++t) {
        const int64_t iw = q - off_w[static_cast<size_t>(t)];
        if (iw < 0 || iw >= s.w.in) continue;
        a_q[static_cast<size_t>(valid)] = x + (a[static_cast<size_t>(t)] + q * cin);
        bt_q[static_cast<size_t>(valid++)] = bt[static_cast<size_t>(t)];
      }
      if (valid > 0) dot.run(cin, valid, 1, nr, a_q.data(), cin, bt_q.data(), c, ldc);
      ++q;
    }
  }
}

// Layers with at most 4 output channels (the RGB/grey heads) take the narrow paths:
// pixel lanes where the layer and the CPU have them, else the dot kernel.
bool narrow_layer(const ConvShape& s) {
  const int64_t taps = s.h.kernel * s.w.kernel;
  return dot_ukernel().run != nullptr && s.out_channels <= kDotMaxColumns && taps <= kNarrowMaxTaps &&
         s.h.stride * s.w.stride <= 64 && taps * s.in_channels * s.out_channels <= kNarrowWeightFloats;
}

// The path a narrow layer takes, decided once per call: pixel lanes where the layer
// and the CPU have them (with the session's plan, or one planned here for callers
// without), else the dot kernel; and the workspace that path needs.
struct NarrowPath {
  PixelLanesPlan lanes;
  bool pixel_lanes = false;
  int64_t workspace_floats = 0;
};

NarrowPath narrow_path(const ConvShape& s, const ConvTranspose2DWeights& wts, int threads) {
  NarrowPath p;
  p.lanes = wts.pixel_lanes_plan ? *wts.pixel_lanes_plan : plan_pixel_lanes(s, wts.phases_h, wts.phases_w);
  p.pixel_lanes = pixel_lanes_available(p.lanes);
  p.workspace_floats = p.pixel_lanes ? pixel_lanes_workspace_floats(p.lanes, threads)
                                     : s.h.kernel * s.w.kernel * s.in_channels * s.out_channels;  // dot: transposed sub-kernels
  return p;
}

// A head on the pixel-lanes path (conv_transpose2d_pixel_lanes.h), with the session's
// packed weights, or packed here for callers without them (the trainer, whose weights
// change every step).
void pixel_lanes_head(const ConvShape& s, const ConvTranspose2DWeights& wts, const PixelLanesPlan& lanes, const float* x, float* y,
                      const Epilogue& ep, int threads, float* workspace) {
  if (wts.pixel_lanes) {
    conv_transpose2d_pixel_lanes(s, wts, lanes, wts.pixel_lanes, x, y, ep, threads, workspace);
    return;
  }
  std::vector<float> packed(static_cast<size_t>(lanes.weight_floats()));
  pack_pixel_lanes_weights(s, wts, lanes, packed.data());
  conv_transpose2d_pixel_lanes(s, wts, lanes, packed.data(), x, y, ep, threads, workspace);
}

// The h offsets of every phase's taps, lowest and highest: a task of input-row position
// qh reads rows qh - hi .. qh - lo.
struct OffsetSpan {
  int64_t lo = 0, hi = 0;
};
OffsetSpan offset_span(const std::vector<AxisPhase>& phases) {
  OffsetSpan span{INT64_MAX, INT64_MIN};
  for (const AxisPhase& p : phases)
    for (int64_t off : p.offsets) span.lo = std::min(span.lo, off), span.hi = std::max(span.hi, off);
  return span.lo > span.hi ? OffsetSpan{} : span;
}
int64_t round_up16(int64_t n) { return (n + 15) / 16 * 16; }
// An fp16 session's scratch per thread on the dot path: an output row in floats, then
// the input rows a task reads, widened.
int64_t dot_halves_thread_floats(const ConvShape& s, const OffsetSpan& span) {
  return round_up16(s.w.out * s.out_channels) + (span.hi - span.lo + 1) * s.w.in * s.in_channels;
}

// Narrow path (the dot kernel): each phase's sub-kernel [tap][Cin][Cout] transposed
// to [tap][Cout][Cin] in the workspace, then one task per input-row position qh of
// one image: the output rows it makes, one per h-phase, each filled with the bias,
// given the products of every w-phase, then activated, all as contiguous passes over
// whole output rows (a few channels per pixel and a phase's pixels two apart leave
// per-phase passes nothing to vectorise). Rows belong to exactly one task: no
// barrier, no reduction.
// Halves (an fp16 session's x and y): each task's input rows widened into its thread's
// block of `scratch` (dot_halves_thread_floats), each output row made there in floats
// and narrowed; returns whether one overflowed.
template <typename XT, typename YT>
bool narrow_dot_rows(const ConvShape& s, const ConvTranspose2DWeights& wts, const DotUkernel& dot, const XT* x, YT* y,
                     const Epilogue& ep, int threads, float* transposed_storage, float* scratch) {
  constexpr bool halves = !std::is_same_v<YT, float>;
  const int64_t cin = s.in_channels, cout = s.out_channels, sw = s.w.stride, phases = s.h.stride * sw;
  std::array<const float*, 64> transposed{};
  const PanelLayout layout = wts.tap_layout(s);
  int64_t offset = 0;
  for (int64_t phase = 0; phase < phases; ++phase) {
    const int64_t ntaps = static_cast<int64_t>(wts.phases_h[static_cast<size_t>(phase / sw)].taps.size() *
                                               wts.phases_w[static_cast<size_t>(phase % sw)].taps.size());
    float* dst = transposed_storage + offset;
    transposed[static_cast<size_t>(phase)] = dst;
    auto transpose = [&](const auto* src) {  // float, or fp16 widened here
      for (int64_t tap = 0; tap < ntaps; ++tap)
        for (int64_t ci = 0; ci < cin; ++ci)
          for (int64_t co = 0; co < cout; ++co)
            dst[(tap * cout + co) * cin + ci] = weight_value(src[tap * cin * cout + layout.index(ci, co)]);
    };
    if (wts.fp16()) transpose(wts.sub_kernels_f16[static_cast<size_t>(phase)]);
    else transpose(wts.sub_kernels[static_cast<size_t>(phase)]);
    offset += ntaps * cin * cout;
  }

  int64_t q_lo = INT64_MAX, q_hi = INT64_MIN;
  for (const AxisPhase& ph : wts.phases_h)
    if (ph.q_end > ph.q_begin) q_lo = std::min(q_lo, ph.q_begin), q_hi = std::max(q_hi, ph.q_end);
  if (q_hi <= q_lo) return false;
  const int64_t rows = q_hi - q_lo, tasks = s.batch * rows, row_floats = s.w.out * cout, image_floats = s.h.in * s.w.in * cin;
  const OffsetSpan span = offset_span(wts.phases_h);
  bool overflow = false;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1) reduction(|| : overflow)
  for (int64_t task = 0; task < tasks; ++task) {
    const int64_t img = task / rows, qh = q_lo + task % rows;
    const float* in = nullptr;  // the image's input rows from row_lo on
    int64_t row_lo = 0;
    float* stage = nullptr;     // halves: the output row in floats
    if constexpr (halves) {
      stage = scratch + thread_index() * dot_halves_thread_floats(s, span);
      float* wide = stage + round_up16(row_floats);
      row_lo = std::max<int64_t>(0, qh - span.hi);
      const int64_t row_hi = std::min(s.h.in, qh - span.lo + 1);
      if (row_hi > row_lo) widen_halves(x + img * image_floats + row_lo * s.w.in * cin, wide, (row_hi - row_lo) * s.w.in * cin);
      in = wide;
    } else {
      in = x + img * image_floats;
    }
    for (size_t a = 0; a < wts.phases_h.size(); ++a) {
      const AxisPhase& ph = wts.phases_h[a];
      if (qh < ph.q_begin || qh >= ph.q_end) continue;
      YT* out = y + (img * s.h.out + ph.output_of(qh, s.h)) * row_floats;
      float* row = nullptr;
      if constexpr (halves) row = stage;
      else row = out;
      fill_bias(row, s.w.out, cout, cout, ep.bias);
      for (size_t b = 0; b < wts.phases_w.size(); ++b)
        if (wts.phases_w[b].q_end > wts.phases_w[b].q_begin)
          row_dot(s, dot, ph, wts.phases_w[b], transposed[a * static_cast<size_t>(sw) + b], in, row_lo, row, qh);
      apply_activation(row, s.w.out, cout, cout, ep.activation, ep.alpha, ep.beta, ep.slope);
      if constexpr (halves) overflow = narrow_to_halves(row, out, row_floats) || overflow;
    }
  }
  return overflow;
}

// Thin layers (a few output channels, conv_transpose2d_phase_lanes.h) where that path
// pays: with the session's plan when it was made for the active ISA, else planned here.
// Measured against the other paths on an AMD EPYC (Zen 5), 1 thread, interleaved
// (bench/thin_layers_bench.cpp):
// - AVX-512: every layer the GEMM tiles would take, 1.05x (64x64x64 -> 8, k3 s2) to 17x
//   (FSRCNN's 360x640x56 -> 1 k9 s3 head, 398 -> 23 ms). Of the dot path's layers only
//   those with more than 2x2 phases or 16 taps (k5 s3 -> 1: 2.0x, k6 s3 -> 2: 1.24x,
//   k7 s2 -> 3: 1.05x); at k4 s2 the dot kernel stays ahead (0.73-0.93x here). The
//   pixel-lanes heads stay on their path (0.63-0.88x here).
// - AVX2 (16 registers: at most 12 outputs and one block per call), and the scalar and
//   NEON families, which were not measured against the others: only GEMM-path layers with
//   more than 2x2 taps per phase (k6 s2 -> 8: 2.4x, k9 s3: 6.4-8.9x; k3 and k4 s2 -> 8
//   lost, 0.56-0.94x on AVX2).
struct ThinPath {
  PhaseLanesPlan plan;
  bool taken = false;
};

ThinPath thin_path(const ConvShape& s, const ConvTranspose2DWeights& wts) {
  ThinPath p;
  if (!wts.allow_phase_lanes || s.out_channels > kPhaseLanesMaxChannels) return p;
  const bool narrow = narrow_layer(s);
  if (narrow && narrow_path(s, wts, 1).pixel_lanes) return p;
  p.plan = wts.phase_lanes_plan && wts.phase_lanes_plan->isa == active_isa() ? *wts.phase_lanes_plan
                                                                            : plan_phase_lanes(s, wts.phases_h, wts.phases_w);
  if (!p.plan.ok) return p;
  if (p.plan.isa == Isa::kAvx512)
    p.taken = !narrow || s.h.stride * s.w.stride > 4 || s.h.kernel * s.w.kernel > 16;
  else
    p.taken = !narrow && p.plan.span_h * p.plan.span_w > 4;
  return p;
}

// A thin layer on the phase-lanes path, with the session's packed weights when they
// were packed for this plan, or packed here (the trainer, kernel tests).
void phase_lanes_layer(const ConvShape& s, const ConvTranspose2DWeights& wts, const PhaseLanesPlan& plan, const float* x, float* y,
                       const Epilogue& ep, int threads, float* workspace) {
  if (wts.phase_lanes && wts.phase_lanes_plan && wts.phase_lanes_plan->isa == plan.isa) {
    conv_transpose2d_phase_lanes(s, wts, plan, wts.phase_lanes, x, y, ep, threads, workspace);
    return;
  }
  std::vector<float> packed(static_cast<size_t>(plan.weight_floats()));
  pack_phase_lanes_weights(s, wts, plan, packed.data());
  conv_transpose2d_phase_lanes(s, wts, plan, packed.data(), x, y, ep, threads, workspace);
}

// The session's transformed filters are for a layer of the Winograd geometry; checked
// anyway, so that weights prepared for another shape fall back to the sub-kernels.
bool winograd_layer(const ConvShape& s, const ConvTranspose2DWeights& wts) {
  return (wts.winograd != nullptr || wts.winograd_sliced) && !narrow_layer(s) && conv_transpose2d_winograd_applies(s, wts);
}
// The sliced form where no whole filters were given.
bool winograd_sliced_layer(const ConvTranspose2DWeights& wts) { return wts.winograd == nullptr; }

// GEMM path: one task per (phase, tile, column block), on the float input and output,
// or on an fp16 session's halves: each tap's input rows widened as they are gathered
// (into each thread's kTilePixels x Cin floats of `wide`), the tile summed in floats as
// for floats, its epilogue applied in place and narrowed into the output rows. Returns
// whether a narrowing overflowed (floats: false).
template <typename XT, typename YT>
bool gemm_path(const ConvShape& s, const ConvTranspose2DWeights& wts, const XT* x, YT* y, const Epilogue& ep, int threads, float* wide) {
  constexpr bool halves = !std::is_same_v<YT, float>;
  const GemmUkernel& uk = gemm_ukernel();
  const int64_t cout = s.out_channels;
  const int64_t sw = s.w.stride, phases = s.h.stride * sw;
  int64_t max_pixels = 0;
  for (const AxisPhase& ph : wts.phases_h)
    for (const AxisPhase& pw : wts.phases_w) max_pixels = std::max(max_pixels, grid_of(ph, pw).pixels(s.batch));
  const int64_t tiles = (max_pixels + kTilePixels - 1) / kTilePixels;
  // Halves: the widest block, since each block widens its tile's input rows again.
  const int64_t col_block = halves ? kMaxColBlock : std::min<int64_t>(2 * uk.nr, kMaxColBlock), col_blocks = (cout + col_block - 1) / col_block;
  const int64_t tasks = phases * tiles * col_blocks;
  const PanelLayout layout = wts.tap_layout(s);
  const bool prefetch_output = output_misses_caches(s);
  // Tiles whose every pixel has their phase's last tap store straight from the
  // micro-kernel's registers, where the kernel family has the fused store and it
  // applies the activation: the 128x128x64 layer, whose 16 MB output misses the
  // caches, 2% faster at 1 thread and 1% at 2; the others the same.
  const Epilogue* fused_store = !halves && !wts.fp16() && gemm_store_applies(ep) ? &ep : nullptr;
  InlineArray<int64_t, 64> last_taps(static_cast<size_t>(phases));  // each phase's tap that goes last, once per call
  for (int64_t phase = 0; phase < phases; ++phase)
    last_taps[static_cast<size_t>(phase)] = last_tap_of(s, wts.phases_h[static_cast<size_t>(phase / sw)], wts.phases_w[static_cast<size_t>(phase % sw)]);

  // Each thread walks a contiguous run of tasks (a band of the output, the next tile's
  // input rows overlapping this one's), stealing from the others' backs once its own is
  // done: 1.5-2.7% faster than one task at a time on the large layers at 2 threads.
  TaskRuns runs(tasks, std::max(1, threads));
  bool overflow = false;
#pragma omp parallel num_threads(threads) if (threads > 1) reduction(|| : overflow)
  for (int64_t task; (task = runs.next(thread_index())) >= 0;) {
    // Phase-minor: the phases of one tile read the same input rows (from L1/L2, not L3).
    const int64_t cb = task % col_blocks, phase = task / col_blocks % phases, tile = task / col_blocks / phases;
    const AxisPhase& ph = wts.phases_h[static_cast<size_t>(phase / sw)];
    const AxisPhase& pw = wts.phases_w[static_cast<size_t>(phase % sw)];
    const PhaseGrid g = grid_of(ph, pw);
    const int64_t p0 = tile * kTilePixels, p1 = std::min(g.pixels(s.batch), p0 + kTilePixels);
    if (p0 >= p1) continue;
    const int64_t j0 = cb * col_block, width = std::min(col_block, cout - j0);
    const Tile<YT> t = load_tile(s, ph, pw, g, p0, p1, y, j0);
    // The tile's output lines, asked for now to arrive while it computes (output_prefetch.h).
    if constexpr (!halves)
      if (prefetch_output)
      for (size_t i = 0; i < static_cast<size_t>(t.count); ++i) prefetch_output_row(t.out[i], width);
    // The tile accumulates in a contiguous block (L1), then goes out once with bias and
    // activation (fused with its last tap where it can): no bias pass and activation
    // pass over the strided output rows.
    alignas(64) float acc[kTilePixels * kMaxColBlock];
    std::fill(acc, acc + t.count * width, 0.f);
    std::array<float*, kTilePixels> acc_rows;
    for (size_t i = 0; i < static_cast<size_t>(t.count); ++i) acc_rows[i] = acc + static_cast<int64_t>(i) * width;
    const int64_t last = last_taps[static_cast<size_t>(phase)];
    float* rows = halves ? wide + thread_index() * kTilePixels * s.in_channels : nullptr;
    const bool stored = wts.fp16() ? tile_gemm(s, layout, ph, pw, wts.sub_kernels_f16[static_cast<size_t>(phase)], x, t, acc_rows.data(), j0, width, last, fused_store, rows)
                                   : tile_gemm(s, layout, ph, pw, wts.sub_kernels[static_cast<size_t>(phase)], x, t, acc_rows.data(), j0, width, last, fused_store, rows);
    const float* bias = ep.bias ? ep.bias + j0 : nullptr;
    const float* slope = ep.slope ? ep.slope + j0 : nullptr;
    if constexpr (halves) {  // the epilogue in place, then each row narrowed
      store_with_epilogue(acc, t.count, width, acc_rows.data(), bias, ep.activation, ep.alpha, ep.beta, slope);
      for (size_t i = 0; i < static_cast<size_t>(t.count); ++i) overflow = narrow_to_halves(acc_rows[i], t.out[i], width) || overflow;
    } else if (!stored) {
      store_with_epilogue(acc, t.count, width, t.out.data(), bias, ep.activation, ep.alpha, ep.beta, slope);
    }
  }
  return overflow;
}

}  // namespace

bool conv_transpose2d_split_phase_lanes(const ConvShape& s, const ConvTranspose2DWeights& wts) {
  return !winograd_layer(s, wts) && thin_path(s, wts).taken;
}

int64_t conv_transpose2d_split_workspace(const ConvShape& s, const ConvTranspose2DWeights& wts, int threads) {
  if (winograd_layer(s, wts)) return conv_transpose2d_winograd_workspace(s, threads, winograd_sliced_layer(wts));
  if (const ThinPath thin = thin_path(s, wts); thin.taken) return phase_lanes_workspace_floats(thin.plan, threads);
  return narrow_layer(s) ? narrow_path(s, wts, threads).workspace_floats : 0;
}

void conv_transpose2d_split(const ConvShape& s, const ConvTranspose2DWeights& wts, const float* x, float* y,
                            const Epilogue& ep, int threads, float* workspace, int64_t workspace_floats) {
  if (winograd_layer(s, wts)) {
    std::vector<float> own;
    workspace = workspace_or_own(workspace, workspace_floats, conv_transpose2d_winograd_workspace(s, threads, winograd_sliced_layer(wts)), own);
    conv_transpose2d_winograd(s, wts, wts.winograd, x, y, ep, threads, workspace);
    return;
  }
  if (const ThinPath thin = thin_path(s, wts); thin.taken) {
    std::vector<float> own;
    workspace = workspace_or_own(workspace, workspace_floats, phase_lanes_workspace_floats(thin.plan, threads), own);
    phase_lanes_layer(s, wts, thin.plan, x, y, ep, threads, workspace);
    return;
  }
  if (narrow_layer(s)) {
    const NarrowPath path = narrow_path(s, wts, threads);
    std::vector<float> own;
    workspace = workspace_or_own(workspace, workspace_floats, path.workspace_floats, own);
    if (path.pixel_lanes) pixel_lanes_head(s, wts, path.lanes, x, y, ep, threads, workspace);
    else narrow_dot_rows(s, wts, dot_ukernel(), x, y, ep, threads, workspace, nullptr);
    return;
  }

  gemm_path(s, wts, x, y, ep, threads, nullptr);
}

bool conv_transpose2d_split_halves_applies(const ConvShape& s, const ConvTranspose2DWeights& wts) {
  if (winograd_layer(s, wts)) return true;
  if (thin_path(s, wts).taken) return false;
  return !narrow_layer(s) || !narrow_path(s, wts, 1).pixel_lanes;
}

int64_t conv_transpose2d_split_halves_workspace(const ConvShape& s, const ConvTranspose2DWeights& wts, int threads) {
  if (winograd_layer(s, wts)) return conv_transpose2d_winograd_workspace(s, threads, winograd_sliced_layer(wts), true);
  if (narrow_layer(s))  // the dot path: its transposed sub-kernels, then each thread's rows
    return saturating_sum({narrow_path(s, wts, threads).workspace_floats,
                           saturating_product({std::max(1, threads), dot_halves_thread_floats(s, offset_span(wts.phases_h))})});
  return saturating_product({std::max(1, threads), kTilePixels, s.in_channels});
}

bool conv_transpose2d_split_halves(const ConvShape& s, const ConvTranspose2DWeights& wts, const uint16_t* x, uint16_t* y,
                                   const Epilogue& ep, int threads, float* workspace, int64_t workspace_floats) {
  std::vector<float> own;
  workspace = workspace_or_own(workspace, workspace_floats, conv_transpose2d_split_halves_workspace(s, wts, threads), own);
  if (winograd_layer(s, wts)) return conv_transpose2d_winograd_halves(s, wts, wts.winograd, x, y, ep, threads, workspace);
  if (narrow_layer(s))
    return narrow_dot_rows(s, wts, dot_ukernel(), x, y, ep, threads, workspace, workspace + narrow_path(s, wts, threads).workspace_floats);
  return gemm_path(s, wts, x, y, ep, threads, workspace);
}

}  // namespace edgegan::cpu
