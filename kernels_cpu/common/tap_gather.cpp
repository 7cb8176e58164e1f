#include "kernels_cpu/common/tap_gather.h"

#include <vector>

#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"
#include "kernels_cpu/gemm/gemm.h"
#include "kernels_cpu/activation/activation.h"
#include "kernels_cpu/common/workspace.h"

namespace edgegan::cpu {

int64_t gemm_over_gathered_taps_workspace(const TapGrid& grid, int64_t ntaps, int threads, int64_t max_rows, int64_t out_channels_halves) {
  const int64_t k = ntaps * grid.channels;
  return std::max(1, threads) * std::min(panel_rows(k), max_rows) * (k + out_channels_halves);
}

void gemm_over_gathered_taps(const TapGrid& grid, const float* src, const TapOffset* taps, int64_t ntaps, const float* kernel,
                             int64_t out_channels, float* out, int threads, const Epilogue& ep, int64_t max_rows, float* workspace) {
  threads = std::max(1, threads);
  const int64_t k = ntaps * grid.channels;
  const int64_t rows = std::min(panel_rows(k), max_rows), pixels = grid.pixels(), panels = (pixels + rows - 1) / rows;
  std::vector<float> own;
  workspace = workspace_or_own(workspace, gemm_over_gathered_taps_workspace(grid, ntaps, threads, max_rows), own);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
  for (int64_t panel = 0; panel < panels; ++panel) {
    const int64_t p0 = panel * rows, p1 = std::min(pixels, p0 + rows);
    float* col = workspace + thread_index() * rows * k;
    gather_taps(grid, src, taps, ntaps, p0, p1, col);
    float* o = out + p0 * out_channels;
    fill_bias(o, p1 - p0, out_channels, out_channels, ep.bias);
    gemm_accumulate(p1 - p0, out_channels, k, col, k, kernel, out_channels, o, out_channels);
    finish_epilogue(o, p0, p1 - p0, out_channels, ep);  // activation, then the residual (if any)
  }
}

bool gemm_over_gathered_taps_halves(const TapGrid& grid, const uint16_t* src, const TapOffset* taps, int64_t ntaps, const float* kernel,
                                    int64_t out_channels, uint16_t* out, int threads, const Epilogue& ep, int64_t max_rows, float* workspace) {
  threads = std::max(1, threads);
  const int64_t k = ntaps * grid.channels;
  const int64_t rows = std::min(panel_rows(k), max_rows), pixels = grid.pixels(), panels = (pixels + rows - 1) / rows;
  bool overflow = false;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1) reduction(|| : overflow)
  for (int64_t panel = 0; panel < panels; ++panel) {
    const int64_t p0 = panel * rows, p1 = std::min(pixels, p0 + rows);
    float* col = workspace + thread_index() * rows * (k + out_channels);
    float* o = col + rows * k;  // the panel's sums, as gemm_over_gathered_taps makes them in the output
    gather_taps(grid, src, taps, ntaps, p0, p1, col);
    fill_bias(o, p1 - p0, out_channels, out_channels, ep.bias);
    gemm_accumulate(p1 - p0, out_channels, k, col, k, kernel, out_channels, o, out_channels);
    finish_epilogue(o, p0, p1 - p0, out_channels, ep);
    overflow = narrow_to_halves(o, out + p0 * out_channels, (p1 - p0) * out_channels) || overflow;
  }
  return overflow;
}

// a is [pixels][Cin], but the GEMM reduces over pixels, so it wants aᵀ [Cin][pixels]:
// transposed once per call (one pass over an activation), every task then runs plain
// GEMMs on it, instead of each task re-packing a transposed panel for every tap group.
void transpose_pixels(int64_t pixels, int64_t channels, const float* src, float* dst, int threads) {
  constexpr int64_t kStrip = 256;  // pixels per task
  const int64_t strips = (pixels + kStrip - 1) / kStrip;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int64_t i = 0; i < strips; ++i) {
    const int64_t p0 = i * kStrip;
    transpose_matrix(std::min(kStrip, pixels - p0), channels, src + p0 * channels, channels, dst + p0, pixels);
  }
}

namespace {

// Taps per task (independent of the thread count, so results are too), rows per panel,
// and each thread's scratch: its gathered panel and, unless its product goes straight
// into one plain [Cin][C] slice, that product.
struct OuterProductTiling {
  int64_t group, tasks, rows, per_thread;
  OuterProductTiling(int64_t cin, int64_t c, int64_t taps_n, int64_t slice_panel) {
    const bool plain = PanelLayout(cin, c, slice_panel).panel == c;
    group = taps_per_task(taps_n, c);
    tasks = (taps_n + group - 1) / group;
    rows = panel_rows(group * c);
    per_thread = rows * group * c + (group == 1 && plain ? 0 : cin * group * c);
  }
};

}  // namespace

int64_t accumulate_tap_outer_products_workspace(const TapGrid& grid, int64_t a_channels, int64_t ntaps, int threads, int64_t slice_panel) {
  if (ntaps == 0) return 0;
  const OuterProductTiling t(a_channels, grid.channels, ntaps, slice_panel);
  return a_channels * grid.pixels() + std::max(1, threads) * t.per_thread;
}

void accumulate_tap_outer_products(const TapGrid& grid, const float* a, int64_t a_channels, const float* src, const TapOffset* taps,
                                   int64_t taps_n, float* const* slices, int threads, int64_t slice_panel, float* workspace) {
  threads = std::max(1, threads);
  const int64_t cin = a_channels, c = grid.channels;
  if (taps_n == 0) return;
  const PanelLayout layout(cin, c, slice_panel);
  const bool plain = layout.panel == c;
  const OuterProductTiling tiling(cin, c, taps_n, slice_panel);
  const int64_t group = tiling.group, tasks = tiling.tasks, rows = tiling.rows, per_thread = tiling.per_thread, pixels = grid.pixels();
  std::vector<float> own;
  workspace = workspace_or_own(workspace, accumulate_tap_outer_products_workspace(grid, a_channels, taps_n, threads, slice_panel), own);
  // A task's product goes straight into its slice when that is one plain [Cin][C]
  // matrix; otherwise into scratch, scattered at the end.
  float* a_t = workspace;
  float* scratch = workspace + cin * pixels;
  transpose_pixels(pixels, cin, a, a_t, threads);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
  for (int64_t task = 0; task < tasks; ++task) {
    const int64_t t0 = task * group, nt = std::min(taps_n, t0 + group) - t0, n = nt * c;
    float* col = scratch + thread_index() * per_thread;
    const bool in_place = nt == 1 && plain;
    float* grad = in_place ? slices[t0] : col + rows * group * c;  // [Cin][nt][C]
    std::fill(grad, grad + cin * n, 0.f);
    for (int64_t p0 = 0; p0 < pixels; p0 += rows) {
      const int64_t p1 = std::min(pixels, p0 + rows);
      gather_taps(grid, src, taps + t0, nt, p0, p1, col);
      gemm_accumulate(cin, n, p1 - p0, a_t + p0, pixels, col, n, grad, n);
    }
    if (!in_place)
      for (int64_t j = 0; j < nt; ++j)
        for (int64_t ci = 0; ci < cin; ++ci)
          for (int64_t q0 = 0; q0 < c; q0 += layout.panel)  // one contiguous run per panel
            std::copy(grad + ci * n + j * c + q0, grad + ci * n + j * c + q0 + layout.width(q0),
                      slices[t0 + j] + layout.index(ci, q0));
  }
}

}  // namespace edgegan::cpu
