#include "kernels_cpu/conv_transpose2d/conv_transpose2d_winograd.h"

#include <algorithm>
#include <array>
#include <type_traits>

#include "kernels_cpu/gemm/gemm.h"
#include "kernels_cpu/common/half.h"
#include "kernels_cpu/common/half_convert.h"
#include "kernels_cpu/conv_transpose2d/output_prefetch.h"
#include "kernels_cpu/common/tap_gather.h"
#include "kernels_cpu/common/task_runs.h"
#include "kernels_common/conv_geometry.h"
#include "kernels_cpu/common/winograd_f2x2.h"

namespace edgegan::cpu {
namespace {

constexpr int64_t kElements = kF2x2Elements;
constexpr int64_t kWindows = 16;    // windows per task: two rows of the 8-row micro-kernel
constexpr int64_t kColBlock = 64;   // output channels per product: two 32-column weight panels

// Windows along one axis: window j reads inputs q0 + 2j - 1 .. q0 + 2j + 1 and gives
// every phase its outputs at q = q0 + 2j and q0 + 2j + 1 (those inside the phase).
struct WindowAxis {
  int64_t q0 = 0, count = 0;
};

WindowAxis window_axis(const std::vector<AxisPhase>& phases) {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const AxisPhase& p : phases)
    if (p.q_end > p.q_begin) lo = std::min(lo, p.q_begin), hi = std::max(hi, p.q_end);
  if (hi <= lo) return {};
  return {lo, (hi - lo + 1) / 2};
}

int64_t round_up16(int64_t n) { return (n + 15) / 16 * 16; }

// One thread's scratch: the task's transformed windows [9][kWindows][Cin], one phase's
// products [9][kWindows][kColBlock], and a row of zeros (the input outside the image;
// the products' starting sums), max(Cin, kColBlock) long.
int64_t thread_floats(const ConvShape& s) {
  return round_up16(kElements * kWindows * s.in_channels) + kElements * kWindows * kColBlock + round_up16(std::max(s.in_channels, kColBlock));
}

// Sliced filters (conv_transpose2d_winograd_sliced): a task's slice holds, per element,
// the block's columns in panels of kSlicePanel, as the sub-kernels' panels are read.
constexpr int64_t kSlicePanel = kF2x2SlicePanel;
constexpr int64_t kSlicePanels = kColBlock / kSlicePanel;
static_assert(kColBlock == kF2x2SliceBlock, "a task's column block is one slice");
// Windows whose products a task holds at once: each (element, panel) of the slice is
// read for all of them in a row, so it stays in L2 (its 9 x 2 panels together do not).
constexpr int64_t kSliceChunk = 256;

int64_t sliced_thread_floats(const ConvShape& s) {
  return kElements * kSlicePanels * s.in_channels * kSlicePanel + kElements * kSliceChunk * kColBlock + round_up16(std::max(s.in_channels, kColBlock));
}

// An fp16 session's extra scratch per thread, after the above: a window's 9 input
// pixels widened, then one window's 4 outputs in floats before they are narrowed.
constexpr int64_t kOutputStage = 4 * kColBlock;
int64_t halves_thread_floats(const ConvShape& s) { return round_up16(9 * s.in_channels) + kOutputStage; }

template <typename YT>
using WindowOutputs = std::array<std::array<YT*, 4>, kWindows>;

// Phase `phase`'s transformed filters for columns [j0, j0 + width) into `slice`
// ([e][panel][Cin][kSlicePanel]), from the sub-kernels (float or fp16).
void make_filter_slice(const ConvShape& s, const ConvTranspose2DWeights& wts, int64_t phase, int64_t j0, int64_t width, float* slice) {
  const int64_t cin = s.in_channels, matrix = cin * s.out_channels;
  const PanelLayout layout = wts.tap_layout(s);
  float widened[4][kSlicePanel];
  for (int64_t col = j0; col < j0 + width;) {
    // A run of columns inside one panel of the sub-kernels and one of the slice: every
    // input channel's row of it lies layout.width(col) floats after the last.
    const int64_t slice_panel = (col - j0) / kSlicePanel;
    const int64_t n = std::min({layout.panel_end(col), j0 + (slice_panel + 1) * kSlicePanel, j0 + width}) - col;
    std::array<float*, kElements> u;
    for (int64_t e = 0; e < kElements; ++e)
      u[static_cast<size_t>(e)] = slice + (e * kSlicePanels + slice_panel) * cin * kSlicePanel + (col - j0 - slice_panel * kSlicePanel);
    // Window order: tap 3 (input offsets 0, 0) meets the window's first input.
    if (!wts.fp16()) {
      const float* k = wts.sub_kernels[static_cast<size_t>(phase)] + layout.index(0, col);
      const std::array<const float*, 4> g = {k + 3 * matrix, k + 2 * matrix, k + matrix, k};
      f2x2_filter_transform(g.data(), layout.width(col), u.data(), kSlicePanel, cin, n);
    } else {
      for (int64_t ci = 0; ci < cin; ++ci) {
        const uint16_t* k = wts.sub_kernels_f16[static_cast<size_t>(phase)] + layout.index(ci, col);
        for (int64_t tap = 0; tap < 4; ++tap)
          for (int64_t c = 0; c < n; ++c) widened[tap][c] = half_to_float(k[tap * matrix + c]);
        const std::array<const float*, 4> g = {widened[3], widened[2], widened[1], widened[0]};
        std::array<float*, kElements> row;
        for (int64_t e = 0; e < kElements; ++e) row[static_cast<size_t>(e)] = u[static_cast<size_t>(e)] + ci * kSlicePanel;
        f2x2_filter_transform(g.data(), 0, row.data(), 0, 1, n);
      }
    }
    col += n;
  }
}

// Each window's four outputs in phase (ph, pw) for columns from j0 (nullptr: outside
// the phase), their lines asked for now to arrive while the products run.
template <typename YT>
void phase_outputs(const ConvShape& s, const AxisPhase& ph, const AxisPhase& pw, const WindowAxis& ah, const WindowAxis& aw, int64_t w0,
                   int64_t count, int64_t j0, int64_t width, YT* y, bool prefetch_output, WindowOutputs<YT>& out) {
  const int64_t per_image = ah.count * aw.count;
  out = {};
  for (int64_t i = 0; i < count; ++i) {
    const int64_t w = w0 + i, img = w / per_image, jh = w % per_image / aw.count, jw = w % aw.count;
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 2; ++b) {
        const int64_t qh = ah.q0 + 2 * jh + a, qw = aw.q0 + 2 * jw + b;
        if (qh < ph.q_begin || qh >= ph.q_end || qw < pw.q_begin || qw >= pw.q_end) continue;
        YT* o = y + ((img * s.h.out + ph.output_of(qh, s.h)) * s.w.out + pw.output_of(qw, s.w)) * s.out_channels + j0;
        out[static_cast<size_t>(i)][static_cast<size_t>(2 * a + b)] = o;
        if constexpr (std::is_same_v<YT, float>)
          if (prefetch_output) prefetch_output_row(o, width);
      }
  }
}

// The input transform of window w (all channels) into v[e][...] (e_stride apart).
// Halves are widened first, the window's 9 pixels into `wide` (9 x Cin floats).
template <typename XT>
void transform_window(const ConvShape& s, const WindowAxis& ah, const WindowAxis& aw, int64_t w, const XT* x, const float* zeros, float* v,
                      int64_t e_stride, float* wide) {
  const int64_t per_image = ah.count * aw.count, img = w / per_image, jh = w % per_image / aw.count, jw = w % aw.count;
  std::array<const float*, 9> d;
  for (int r = 0; r < 3; ++r)
    for (int col = 0; col < 3; ++col) {
      const int64_t ih = ah.q0 + 2 * jh - 1 + r, iw = aw.q0 + 2 * jw - 1 + col;
      const bool inside = ih >= 0 && ih < s.h.in && iw >= 0 && iw < s.w.in;
      const int64_t at = ((img * s.h.in + ih) * s.w.in + iw) * s.in_channels;
      if constexpr (std::is_same_v<XT, float>) {
        d[static_cast<size_t>(3 * r + col)] = inside ? x + at : zeros;
      } else {
        float* pixel = wide + (3 * r + col) * s.in_channels;
        if (inside) widen_halves(x + at, pixel, s.in_channels);
        d[static_cast<size_t>(3 * r + col)] = inside ? pixel : zeros;
      }
    }
  f2x2_input_transform(d.data(), s.in_channels, v, e_stride);
}

// Output transform of a group's products (window i's element e at m + (e * e_rows + i)
// * width) into its windows' outputs. Halves: each window's outputs into `stage`
// (kOutputStage floats) with the epilogue, then narrowed; returns whether one overflowed.
template <typename YT>
bool finish_windows(const float* m, int64_t e_rows, int64_t count, int64_t width, const WindowOutputs<YT>& out, const Epilogue& ep,
                    int64_t j0, float* stage) {
  bool overflow = false;
  for (int64_t i = 0; i < count; ++i) {
    std::array<const float*, 9> mr;
    for (int64_t e = 0; e < kElements; ++e) mr[static_cast<size_t>(e)] = m + (e * e_rows + i) * width;
    const std::array<YT*, 4>& o = out[static_cast<size_t>(i)];
    if constexpr (std::is_same_v<YT, float>) {
      f2x2_output_transform(mr.data(), width, o.data(), nullptr, ep, j0);
    } else {
      std::array<float*, 4> staged;
      for (size_t k = 0; k < 4; ++k) staged[k] = o[k] ? stage + static_cast<int64_t>(k) * width : nullptr;
      f2x2_output_transform(mr.data(), width, staged.data(), nullptr, ep, j0);
      for (size_t k = 0; k < 4; ++k)
        if (o[k]) overflow = narrow_to_halves(staged[k], o[k], width) || overflow;
    }
  }
  return overflow;
}

WindowAxis window_axis_of(const ConvAxis& a) { return window_axis(split_conv_transpose_axis(a)); }

// The sliced form: every window's input transform into the workspace, then one task per
// (phase, 64-column block) that makes its filter slice and multiplies every window by it.
// Floats (XT, YT) or halves; returns whether a narrowing overflowed.
template <typename XT, typename YT>
bool winograd_sliced(const ConvShape& s, const ConvTranspose2DWeights& wts, const XT* x, YT* y, const Epilogue& ep, int threads,
                     float* workspace) {
  constexpr bool halves = !std::is_same_v<YT, float>;
  const int64_t cin = s.in_channels, cout = s.out_channels, sw = s.w.stride, phases = s.h.stride * sw;
  const WindowAxis ah = window_axis(wts.phases_h), aw = window_axis(wts.phases_w);
  const int64_t windows = s.batch * ah.count * aw.count, e_stride = windows * cin;
  const int64_t blocks = (cout + kColBlock - 1) / kColBlock;
  float* v = workspace;
  float* scratch = workspace + round_up16(kElements * e_stride);
  const int64_t per_thread = sliced_thread_floats(s) + (halves ? halves_thread_floats(s) : 0);
  const bool prefetch_output = output_misses_caches(s);
  TaskRuns runs(phases * blocks, std::max(1, threads));
  bool overflow = false;
#pragma omp parallel num_threads(threads) if (threads > 1) reduction(|| : overflow)
  {
    float* slice = scratch + thread_index() * per_thread;
    float* m = slice + kElements * kSlicePanels * cin * kSlicePanel;
    float* zeros = m + kElements * kSliceChunk * kColBlock;
    float* wide = slice + sliced_thread_floats(s);  // halves only
    float* stage = wide + round_up16(9 * cin);
    std::fill(zeros, zeros + std::max(cin, kColBlock), 0.f);
#pragma omp for schedule(static)
    for (int64_t w = 0; w < windows; ++w) transform_window(s, ah, aw, w, x, zeros, v + w * cin, e_stride, wide);
    WindowOutputs<YT> out;
    for (int64_t task; (task = runs.next(thread_index())) >= 0;) {
      const int64_t phase = task / blocks, j0 = task % blocks * kColBlock, width = std::min(kColBlock, cout - j0);
      const AxisPhase& ph = wts.phases_h[static_cast<size_t>(phase / sw)];
      const AxisPhase& pw = wts.phases_w[static_cast<size_t>(phase % sw)];
      if (ph.q_end <= ph.q_begin || pw.q_end <= pw.q_begin) continue;
      make_filter_slice(s, wts, phase, j0, width, slice);
      for (int64_t c0 = 0; c0 < windows; c0 += kSliceChunk) {
        const int64_t chunk = std::min(kSliceChunk, windows - c0);
        f2x2_slice_products(v, e_stride, cin, c0, chunk, slice, width, zeros, m);
        for (int64_t g0 = 0; g0 < chunk; g0 += kWindows) {
          const int64_t count = std::min(kWindows, chunk - g0);
          phase_outputs(s, ph, pw, ah, aw, c0 + g0, count, j0, width, y, prefetch_output, out);
          overflow = finish_windows(m + g0 * width, chunk, count, width, out, ep, j0, stage) || overflow;
        }
      }
    }
  }
  return overflow;
}

}  // namespace

bool conv_transpose2d_winograd_applies(const ConvShape& s, const ConvTranspose2DWeights& wts) {
  if (s.h.dilation != 1 || s.w.dilation != 1 || s.in_channels < 1 || s.out_channels < 1) return false;
  auto two_taps = [](const std::vector<AxisPhase>& phases) {
    if (phases.empty()) return false;
    for (const AxisPhase& p : phases)
      if (p.offsets.size() != 2 || p.offsets[0] != 0 || p.offsets[1] != 1) return false;
    return true;
  };
  return two_taps(wts.phases_h) && two_taps(wts.phases_w);
}

// Where it pays, measured against the split path (interleaved calls, AVX-512, batch 1
// unless noted; time of split / time of Winograd, 1 thread / 2 threads):
//   128x128x64->64 1.41 / 1.40      64x64x128->64 1.40-1.47 / 1.40
//   32x32x64->32   1.38 / 1.22      16x16x128->64 1.19 / 0.95, at batch 16 1.24
//   8x8x256->128   0.87 / 0.54, at batch 16 0.92      4x4x512->256 0.48 / 0.30
// It needs windows to share each transformed filter panel (few windows leave two
// threads a task or two each), and filters that stay in L2 (1 MiB per core here): each
// task streams all of them, and they are 9/4 the size of the sub-kernels.
// Wider filters are made in every run instead of kept, where many windows share them
// (pix2pix's decoder, 1 thread / 2 threads: 64x64x256->64, 2.4 MiB of filters, 1089
// windows, 19.6 -> 14.1 / 10.4 -> 8.0 ms). With fewer windows it did not pay: the
// 32x32x512->128 layer (9.4 MiB, 289 windows) 19.9 -> 18.5 / 10.2 -> 10.0 ms, and
// 8x8x256->128 at batch 16 lost (above).
constexpr int64_t kMinWindows = 256;
constexpr int64_t kMaxTransformedBytes = int64_t{2} << 20;
constexpr int64_t kMinWindowsPerRunFilters = 1024;
constexpr int64_t kMaxPerRunBytes = int64_t{4} << 20;
// Filters neither kept nor made whole in every run are made a slice at a time where
// there are windows enough to share each slice. pix2pix's decoder (1 / 2 threads):
// 32x32x512->128 (289 windows) 20.1 -> 14.4 / 10.1 -> 7.3 ms, 16x16x1024->256 (81
// windows) 20.7 -> 17.8 / 10.3 -> 9.0 ms, a 16x16x128->120 layer (81) 1.34 -> 1.23 ms
// at 1 thread; 8x8x1024->512 (25 windows) lost, 9.9 -> 15.3 ms. On small maps most
// windows straddle the border, computing outputs that fall outside the image, and it
// lost at batch 16 even with windows enough: DCGAN-64's 8x8x256->128 (64% of the
// windows' outputs inside, 400 windows) 9.0 -> 9.7 / 4.5 -> 6.2 ms, 4x4x512->256 (44%)
// 8.7 -> 14.9 ms. So it needs 3/4 of them inside (79% on 16x16 maps, 89% on 32x32).
constexpr int64_t kMinWindowsSliced = 64;
constexpr int64_t kMaxSlicedInputBytes = int64_t{16} << 20;  // every window's input transform, kept for the run

bool conv_transpose2d_winograd_keeps_filters(const ConvShape& s) { return conv_transpose2d_winograd_weight_floats(s) * 4 <= kMaxTransformedBytes; }

namespace {
int64_t window_count(const ConvShape& s) {
  return saturating_product({s.batch, window_axis_of(s.h).count, window_axis_of(s.w).count});
}
bool whole_filters_per_run(const ConvShape& s) {
  return window_count(s) >= kMinWindowsPerRunFilters && conv_transpose2d_winograd_weight_floats(s) * 4 <= kMaxPerRunBytes;
}
}  // namespace

bool conv_transpose2d_winograd_sliced(const ConvShape& s) {
  // Outputs inside the image against the 2 x 2 per phase that each window computes.
  const int64_t inside = saturating_product({s.batch, s.h.out, s.w.out});
  const int64_t computed = saturating_product({window_count(s), s.h.stride, s.w.stride, 4});
  return !conv_transpose2d_winograd_keeps_filters(s) && !whole_filters_per_run(s) && window_count(s) >= kMinWindowsSliced &&
         4 * inside >= 3 * computed && saturating_product({kElements, window_count(s), s.in_channels, 4}) <= kMaxSlicedInputBytes;
}

bool conv_transpose2d_winograd_pays(const ConvShape& s, const ConvTranspose2DWeights& wts) {
  if (!conv_transpose2d_winograd_applies(s, wts) || s.in_channels < 16 || s.out_channels < 16) return false;
  if (conv_transpose2d_winograd_keeps_filters(s)) return window_count(s) >= kMinWindows;
  return whole_filters_per_run(s) || conv_transpose2d_winograd_sliced(s);
}

int64_t conv_transpose2d_winograd_weight_floats(const ConvShape& s) {
  return saturating_product({s.h.stride, s.w.stride, kElements, s.in_channels, s.out_channels});
}

void pack_conv_transpose2d_winograd_weights(const ConvShape& s, const ConvTranspose2DWeights& wts, float* out, int threads) {
  const int64_t matrix = s.in_channels * s.out_channels, phases = s.h.stride * s.w.stride;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && phases > 1)
  for (int64_t phase = 0; phase < phases; ++phase) {
    // h[i][j]: the 2x2 sub-kernel in window order: tap index 1 (input offset 1) reads the
    // window's first input, so it is h0.
    auto h = [&](int i, int j, int64_t idx) -> float {
      const int64_t tap = (1 - i) * 2 + (1 - j);
      return wts.fp16() ? half_to_float(wts.sub_kernels_f16[static_cast<size_t>(phase)][tap * matrix + idx])
                        : wts.sub_kernels[static_cast<size_t>(phase)][tap * matrix + idx];
    };
    float* u = out + phase * kElements * matrix;
    // The layout inside a matrix is the sub-kernels' (column panels): element-wise.
    for (int64_t idx = 0; idx < matrix; ++idx) {
      const float h00 = h(0, 0, idx), h01 = h(0, 1, idx), h10 = h(1, 0, idx), h11 = h(1, 1, idx);
      const float g[3][2] = {{h00, h01}, {h00 + h10, h01 + h11}, {h10, h11}};  // G h, G = [[1,0],[1,1],[0,1]]
      for (int a = 0; a < 3; ++a) {
        u[(3 * a + 0) * matrix + idx] = g[a][0];
        u[(3 * a + 1) * matrix + idx] = g[a][0] + g[a][1];
        u[(3 * a + 2) * matrix + idx] = g[a][1];
      }
    }
  }
}

namespace {

// Whole filters: one task per kWindows windows, every phase and column block of them.
// Floats (XT, YT) or halves; returns whether a narrowing overflowed.
template <typename XT, typename YT>
bool winograd_whole(const ConvShape& s, const ConvTranspose2DWeights& wts, const float* transformed, const XT* x, YT* y,
                    const Epilogue& ep, int threads, float* workspace) {
  constexpr bool halves = !std::is_same_v<YT, float>;
  const int64_t cin = s.in_channels, cout = s.out_channels, sw = s.w.stride, phases = s.h.stride * sw;
  const WindowAxis ah = window_axis(wts.phases_h), aw = window_axis(wts.phases_w);
  const int64_t windows = s.batch * ah.count * aw.count;
  const int64_t tasks = (windows + kWindows - 1) / kWindows, matrix = cin * cout;
  const PanelLayout layout = wts.tap_layout(s);
  const int64_t per_thread = thread_floats(s) + (halves ? halves_thread_floats(s) : 0);
  const bool prefetch_output = output_misses_caches(s);
  TaskRuns runs(tasks, std::max(1, threads));
  bool overflow = false;
#pragma omp parallel num_threads(threads) if (threads > 1) reduction(|| : overflow)
  {
    float* v = workspace + thread_index() * per_thread;
    float* m = v + round_up16(kElements * kWindows * cin);
    float* zeros = m + kElements * kWindows * kColBlock;
    float* wide = v + thread_floats(s);  // halves only
    float* stage = wide + round_up16(9 * cin);
    std::fill(zeros, zeros + std::max(cin, kColBlock), 0.f);
    const int64_t e_stride = kWindows * cin;
    std::array<const float*, kWindows> a_rows, zero_rows;
    std::array<float*, kWindows> c_rows;
    WindowOutputs<YT> out;
    zero_rows.fill(zeros);
    for (int64_t task; (task = runs.next(thread_index())) >= 0;) {
      const int64_t w0 = task * kWindows, count = std::min(kWindows, windows - w0);
      for (int64_t i = 0; i < count; ++i) transform_window(s, ah, aw, w0 + i, x, zeros, v + i * cin, e_stride, wide);
      for (int64_t phase = 0; phase < phases; ++phase) {
        const AxisPhase& ph = wts.phases_h[static_cast<size_t>(phase / sw)];
        const AxisPhase& pw = wts.phases_w[static_cast<size_t>(phase % sw)];
        if (ph.q_end <= ph.q_begin || pw.q_end <= pw.q_begin) continue;
        const float* u = transformed + phase * kElements * matrix;
        for (int64_t j0 = 0; j0 < cout; j0 += kColBlock) {
          const int64_t width = std::min(kColBlock, cout - j0);
          phase_outputs(s, ph, pw, ah, aw, w0, count, j0, width, y, prefetch_output, out);
          // Products into m, each started from a row of zeros: no clearing pass where the
          // family has the fused store.
          for (int64_t e = 0; e < kElements; ++e) {
            for (int64_t i = 0; i < count; ++i) a_rows[static_cast<size_t>(i)] = v + e * e_stride + i * cin;
            // One weight panel at a time, as the split path reads them.
            for (int64_t n0 = j0; n0 < j0 + width;) {
              const int64_t n = std::min(j0 + width, layout.panel_end(n0)) - n0;
              for (int64_t i = 0; i < count; ++i) c_rows[static_cast<size_t>(i)] = m + (e * count + i) * width + (n0 - j0);
              const float* b = u + e * matrix + layout.index(0, n0);
              gemm_store_rows(count, n, cin, a_rows.data(), b, layout.width(n0), zero_rows.data(), c_rows.data(), Epilogue{});
              n0 += n;
            }
          }
          // Output transform, straight to the phase's strided output pixels.
          overflow = finish_windows(m, count, count, width, out, ep, j0, stage) || overflow;
        }
      }
    }
  }
  return overflow;
}

}  // namespace

int64_t conv_transpose2d_winograd_workspace(const ConvShape& s, int threads, bool sliced, bool halves) {
  const int64_t extra = halves ? halves_thread_floats(s) : 0;
  if (sliced)
    return saturating_sum({round_up16(saturating_product({kElements, window_count(s), s.in_channels})),
                           saturating_product({std::max(1, threads), saturating_sum({sliced_thread_floats(s), extra})})});
  return saturating_product({std::max(1, threads), saturating_sum({thread_floats(s), extra})});
}

void conv_transpose2d_winograd(const ConvShape& s, const ConvTranspose2DWeights& wts, const float* transformed, const float* x,
                               float* y, const Epilogue& ep, int threads, float* workspace) {
  if (!transformed) winograd_sliced(s, wts, x, y, ep, threads, workspace);
  else winograd_whole(s, wts, transformed, x, y, ep, threads, workspace);
}

bool conv_transpose2d_winograd_halves(const ConvShape& s, const ConvTranspose2DWeights& wts, const float* transformed, const uint16_t* x,
                                      uint16_t* y, const Epilogue& ep, int threads, float* workspace) {
  if (!transformed) return winograd_sliced(s, wts, x, y, ep, threads, workspace);
  return winograd_whole(s, wts, transformed, x, y, ep, threads, workspace);
}

}  // namespace edgegan::cpu
