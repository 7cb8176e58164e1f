// Gathering kernel taps into contiguous panels, so that the backward kernels run one
// large GEMM per panel instead of one GEMM per image row (whose K or M is a row width
// of 4..64 pixels, too small for the GEMM to amortise packing the other operand).
//
// A grid of rows p = (n, a, b) over [N][A][B]; tap t reads source pixel
// (n, a*stride_a + tap[t].h, b*stride_b + tap[t].w) of src [N][H][W][C], or zeros
// where that pixel lies outside the source (padding: such rows multiply zeros, which
// only happens at image borders; inserted zeros are never formed).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels_common/conv_geometry.h"
#include "kernels_cpu/common/conv_input_map.h"
#include "kernels_cpu/common/inline_array.h"
#include "kernels_cpu/common/thread_index.h"
#include "kernels_cpu/common/epilogue.h"
#include "kernels_cpu/common/half_convert.h"

namespace edgegan::cpu {

struct TapOffset {
  int64_t h = 0, w = 0;
};

struct TapGrid {
  int64_t batch = 1, rows = 0, cols = 0;        // N, A, B
  int64_t stride_h = 1, stride_w = 1;           // source step per grid row / column
  int64_t src_h = 0, src_w = 0, channels = 0;   // source [N][H][W][C]
  const ConvInputMap* map = nullptr;            // the source read through index tables (H, W: the tables' lengths)
  int64_t pixels() const { return batch * rows * cols; }
};

// col[(p - p0)][t][c] for p in [p0, p1), t in [0, ntaps): row stride ntaps*C.
// Taps next to each other along a source row (one kernel row, unit dilation, inside
// the image, and through the map where its columns are consecutive) are copied as one
// run: an image's 3 channels per tap made a memcpy call per 12 bytes, 81 per pixel of
// a 9x9 layer (the fast-style network's first layer: 110 ms at 512x512).
// T: float, or an fp16 session's halves (widened exactly as they are gathered).
template <typename T>
void gather_taps(const TapGrid& g, const T* src, const TapOffset* taps, int64_t ntaps, int64_t p0, int64_t p1, float* col) {
  const int64_t c = g.channels, row_len = ntaps * c;
  int64_t n = p0 / (g.rows * g.cols), a = (p0 / g.cols) % g.rows, b = p0 % g.cols;
  for (int64_t p = p0; p < p1; ++p) {
    float* dst = col + (p - p0) * row_len;
    for (int64_t t = 0; t < ntaps;) {
      const int64_t h = a * g.stride_h + taps[t].h, w = b * g.stride_w + taps[t].w;
      if (h < 0 || h >= g.src_h || w < 0 || w >= g.src_w) {
        std::fill(dst, dst + c, 0.f);
        dst += c, ++t;
        continue;
      }
      int64_t run = 1;
      while (t + run < ntaps && taps[t + run].h == taps[t].h && taps[t + run].w == taps[t].w + run && w + run < g.src_w &&
             (!g.map || g.map->cols[w + run] == g.map->cols[w] + run))
        ++run;
      const int64_t floats = run * c;
      if constexpr (sizeof(T) == sizeof(uint16_t)) {  // where conv_input_pixel finds the pixel
        const int64_t at = g.map ? (n * g.map->src_h + g.map->rows[h]) * g.map->src_w + g.map->cols[w] : (n * g.src_h + h) * g.src_w + w;
        widen_halves(src + at * c, dst, floats);
      } else {
        const float* from = conv_input_pixel(src, g.map, g.src_h, g.src_w, c, n, h, w);
        if (floats <= 4) {
          for (int64_t i = 0; i < floats; ++i) dst[i] = from[i];
        } else {
          std::memcpy(dst, from, static_cast<size_t>(floats) * sizeof(float));
        }
      }
      dst += floats, t += run;
    }
    if (++b == g.cols) {
      b = 0;
      if (++a == g.rows) a = 0, ++n;
    }
  }
}

// A convolution's taps in [kh][kw] order (its packed weights' order): tap (kh, kw) of
// output pixel (oh, ow) reads input (oh*stride + h, ow*stride + w).
// Kernels up to 11x11 keep theirs without a heap allocation.
using TapList = InlineArray<TapOffset, 128>;
inline TapList conv_tap_offsets(const ConvShape& s) {
  TapList taps(static_cast<size_t>(s.h.kernel * s.w.kernel));
  for (int64_t kh = 0; kh < s.h.kernel; ++kh)
    for (int64_t kw = 0; kw < s.w.kernel; ++kw)
      taps[static_cast<size_t>(kh * s.w.kernel + kw)] = {kh * s.h.dilation - s.h.pad_begin, kw * s.w.dilation - s.w.pad_begin};
  return taps;
}

// Taps per task when a task's GEMM is taps*channels wide: enough taps for 32 columns,
// then spread evenly over the tasks that makes (3 channels: 8+8 taps, not 11+5, whose
// 33 columns would cost a second, almost empty register panel).
inline int64_t taps_per_task(int64_t taps, int64_t channels) {
  const int64_t want = std::clamp<int64_t>((32 + channels - 1) / channels, 1, taps), tasks = (taps + want - 1) / want;
  return (taps + tasks - 1) / tasks;
}

// Rows per panel: about `budget` floats of gathered data, at least `lo`, at most `hi`.
inline int64_t panel_rows(int64_t row_floats, int64_t budget = int64_t{1} << 17, int64_t lo = 32, int64_t hi = 1024) {
  return std::clamp(budget / std::max<int64_t>(1, row_floats), lo, hi);
}

// Two GEMM drivers over gathered taps. accumulate_tap_outer_products is the weight
// gradient of the split and the zero-insertion transposed-conv backward alike (they
// differ only in the grid and taps they hand in); gemm_over_gathered_taps is the
// zero-insertion baseline's input gradient and the trimmed conv's path for few input
// channels (conv2d_trimmed.h).
//
// out[p][0..Cout_k) = epilogue(sum over taps t of src(p, t) · kernel_t), for every grid
// pixel p: per panel of pixels, all taps gathered into one row, then one GEMM with the
// kernel laid out [taps][C][Cout_k] (a conv's packed weights; or built once per call,
// e.g. FullKernelLayout::kTapsFirstTransposed); out rows are contiguous (overwritten).
// At most `max_rows` pixels per panel (tasks); the panel split never changes a result.
// `workspace` holds gemm_over_gathered_taps_workspace floats (nullptr: allocated per call).
int64_t gemm_over_gathered_taps_workspace(const TapGrid& grid, int64_t ntaps, int threads, int64_t max_rows = int64_t{1} << 20,
                                          int64_t out_channels_halves = 0);
void gemm_over_gathered_taps(const TapGrid& grid, const float* src, const TapOffset* taps, int64_t ntaps, const float* kernel,
                             int64_t out_channels, float* out, int threads, const Epilogue& epilogue = {},
                             int64_t max_rows = int64_t{1} << 20, float* workspace = nullptr);
// An fp16 session's form: src and out halves, the taps widened as they are gathered,
// each panel's sums finished in a float block and narrowed (ties to even); no residual.
// Workspace: gemm_over_gathered_taps_workspace(..., out_channels) floats. Returns whether
// a finite output became infinite.
bool gemm_over_gathered_taps_halves(const TapGrid& grid, const uint16_t* src, const TapOffset* taps, int64_t ntaps, const float* kernel,
                                    int64_t out_channels, uint16_t* out, int threads, const Epilogue& ep, int64_t max_rows, float* workspace);

// dst [channels][pixels] = src [pixels][channels] transposed, split over threads.
void transpose_pixels(int64_t pixels, int64_t channels, const float* src, float* dst, int threads);

// slices[t] [Cin][C] (overwritten) = sum over grid pixels p of a[p]ᵀ · src(p, t): a
// ([pixels][Cin]) is transposed once per call, src gathered per tap and panel. With few
// channels C a task takes several taps (N = taps*C) and scatters its result at the end.
// Each slice is written in PanelLayout(Cin, C, slice_panel): the layout of the weights
// it is the gradient of (0: plain [Cin][C]).
// Tasks own their slices; results do not depend on the thread count. `workspace` holds
// accumulate_tap_outer_products_workspace floats (nullptr: allocated per call).
int64_t accumulate_tap_outer_products_workspace(const TapGrid& grid, int64_t a_channels, int64_t ntaps, int threads, int64_t slice_panel = 0);
void accumulate_tap_outer_products(const TapGrid& grid, const float* a, int64_t a_channels, const float* src, const TapOffset* taps,
                                   int64_t ntaps, float* const* slices, int threads, int64_t slice_panel = 0, float* workspace = nullptr);

}  // namespace edgegan::cpu
