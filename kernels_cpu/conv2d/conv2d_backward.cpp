#include "kernels_cpu/conv2d/conv2d_backward.h"
#include "kernels_cpu/conv2d/conv2d_grouped.h"

#include <algorithm>

#include "kernels_cpu/conv_transpose2d/conv_transpose2d_split.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_backward.h"
#include "kernels_cpu/gemm/gemm.h"
#include "kernels_cpu/common/tap_gather.h"
#include "kernels_cpu/common/epilogue.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"
#include "kernels_cpu/common/workspace.h"

namespace edgegan::cpu {

void conv2d_backward_reference(const ConvShape& s, const float* x, const float* w, const float* dy, float* dx, float* dw, float* db) {
  conv2d_grouped_backward_reference(s, 1, x, w, dy, dx, dw, db);
}

namespace {

// The transposed conv that maps dY to dX: reads the conv's output, writes its input.
ConvShape input_gradient_shape(const ConvShape& s) {
  ConvShape g;
  g.batch = s.batch;
  g.in_channels = s.out_channels;  // the transposed conv reads dY ...
  g.out_channels = s.in_channels;  // ... and writes dX
  auto axis = [](const ConvAxis& a) {
    ConvAxis d{a.out, a.kernel, a.stride, a.dilation, a.pad_begin, 0, a.in};
    // Whatever pad_end makes the output length the conv's input length (it may be
    // negative: rows the conv never read get zero gradient).
    d.pad_end = (a.out - 1) * a.stride - a.pad_begin + a.dilation * (a.kernel - 1) + 1 - a.in;
    return d;
  };
  g.h = axis(s.h);
  g.w = axis(s.w);
  return g;
}

}  // namespace

ConvInputGradient plan_conv2d_input_gradient(const ConvShape& s) {
  ConvInputGradient g;
  g.conv = s;
  g.shape = input_gradient_shape(s);
  g.split.phases_h = split_conv_transpose_axis(g.shape.h);
  g.split.phases_w = split_conv_transpose_axis(g.shape.w);
  g.split.sub_kernels.assign(g.split.phases_h.size() * g.split.phases_w.size(), nullptr);
  return g;
}

namespace {

// Sub-kernel tap [C_in = Cout][C_out = Cin] is the conv's tap [Cin][Cout] transposed (no flip).
void transpose_taps(ConvInputGradient& g, const float* packed, float* storage) {
  const ConvShape& s = g.conv;
  const int64_t cin = s.in_channels, cout = s.out_channels, kw = s.w.kernel;
  float* dst = storage;
  size_t phase = 0;
  for (const AxisPhase& ph : g.split.phases_h)
    for (const AxisPhase& pw : g.split.phases_w) {
      g.split.sub_kernels[phase++] = ph.taps.empty() || pw.taps.empty() ? nullptr : dst;
      for (int64_t th : ph.taps)
        for (int64_t tw : pw.taps) {
          transpose_matrix(cin, cout, packed + (th * kw + tw) * cin * cout, cout, dst, cin);
          dst += cin * cout;
        }
    }
}

int64_t transposed_taps_floats(const ConvShape& s) { return s.in_channels * s.out_channels * s.h.kernel * s.w.kernel; }

// Rows per panel of the few-channel (col2im) path.
int64_t col2im_rows(const ConvShape& s) { return panel_rows(s.h.kernel * s.w.kernel * s.in_channels); }

}  // namespace

int64_t conv2d_backward_input_workspace(const ConvShape& s, int threads) {
  const int64_t taps = transposed_taps_floats(s);
  if (threads <= 0) return taps;
  if (s.in_channels < 16) return taps + threads * col2im_rows(s) * s.h.kernel * s.w.kernel * s.in_channels;
  ConvInputGradient view = plan_conv2d_input_gradient(s);
  return taps + conv_transpose2d_split_workspace(view.shape, view.split, threads);
}

ConvInputGradient make_conv2d_input_gradient(const ConvShape& s, const float* packed, float* storage) {
  ConvInputGradient g = plan_conv2d_input_gradient(s);
  transpose_taps(g, packed, storage);
  return g;
}

// dX is the split transposed conv's forward pass over dY (no bias, no activation): per
// phase of dX, per tap, an indirect GEMM over the dY pixels the tap reads, written
// straight into the phase's strided dX pixels.
void conv2d_backward_input(const ConvInputGradient& plan, const float* dy, float* dx, int threads) {
  conv_transpose2d_split(plan.shape, plan.split, dy, dx, Epilogue{}, threads);
}

namespace {

// For few input channels (an image, e.g. a discriminator's first conv), where the phase
// GEMMs would be Cin wide: col = dY · Wᵀ per panel of output pixels ([taps][Cin] per
// pixel, one GEMM with N = taps*Cin), added into dX (col2im). One task per image, which
// owns that image's dX.
void conv2d_backward_input_col2im(const ConvShape& s, const float* packed, const float* dy, float* dx, float* packed_t, float* columns,
                                  int threads) {
  threads = std::max(1, threads);
  const int64_t cin = s.in_channels, cout = s.out_channels, kw = s.w.kernel, n_cols = s.h.kernel * kw * cin;
  const int64_t image_in = s.h.in * s.w.in * cin, image_pixels = s.h.out * s.w.out, rows = col2im_rows(s);
  std::fill(dx, dx + s.batch * image_in, 0.f);
  std::vector<float> own;
  columns = workspace_or_own(columns, threads * rows * n_cols, own);
  // packed is [taps*Cin][Cout]; each panel multiplies by its transpose: transpose once.
  transpose_matrix(n_cols, cout, packed, cout, packed_t, n_cols);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
  for (int64_t n = 0; n < s.batch; ++n) {
    float* col = columns + thread_index() * rows * n_cols;
    float* image = dx + n * image_in;
    for (int64_t p0 = 0; p0 < image_pixels; p0 += rows) {
      const int64_t m = std::min(image_pixels, p0 + rows) - p0;
      std::fill(col, col + m * n_cols, 0.f);
      gemm_accumulate(m, n_cols, cout, dy + (n * image_pixels + p0) * cout, cout, packed_t, n_cols, col, n_cols);
      for (int64_t r = 0; r < m; ++r) {
        const int64_t oh = (p0 + r) / s.w.out, ow = (p0 + r) % s.w.out;
        for (int64_t kh = 0; kh < s.h.kernel; ++kh) {
          const int64_t ih = oh * s.h.stride - s.h.pad_begin + kh * s.h.dilation;
          if (ih < 0 || ih >= s.h.in) continue;
          for (int64_t k = 0; k < kw; ++k) {
            const int64_t iw = ow * s.w.stride - s.w.pad_begin + k * s.w.dilation;
            if (iw < 0 || iw >= s.w.in) continue;
            const float* src = col + r * n_cols + (kh * kw + k) * cin;
            float* dst = image + (ih * s.w.in + iw) * cin;
            for (int64_t c = 0; c < cin; ++c) dst[c] += src[c];
          }
        }
      }
    }
  }
}

}  // namespace

void conv2d_backward_input(ConvInputGradient& view, const float* packed, const float* dy, float* dx, float* workspace,
                           int64_t workspace_floats, int threads) {
  const ConvShape& s = view.conv;
  // After the transposed taps, the scratch of the path taken (each checks that it fits, and allocates its own if not).
  float* rest = workspace + transposed_taps_floats(s);
  const int64_t rest_floats = workspace_floats - transposed_taps_floats(s);
  if (s.in_channels < 16) {
    const bool fits = rest_floats >= std::max(1, threads) * col2im_rows(s) * s.h.kernel * s.w.kernel * s.in_channels;
    return conv2d_backward_input_col2im(s, packed, dy, dx, workspace, fits ? rest : nullptr, threads);
  }
  transpose_taps(view, packed, workspace);
  conv_transpose2d_split(view.shape, view.split, dy, dx, Epilogue{}, threads, rest_floats > 0 ? rest : nullptr, std::max<int64_t>(0, rest_floats));
}

void conv2d_backward_input(const ConvShape& shape, const float* packed, const float* dy, float* dx, float* workspace, int threads) {
  if (shape.in_channels < 16) return conv2d_backward_input_col2im(shape, packed, dy, dx, workspace, nullptr, threads);
  conv2d_backward_input(make_conv2d_input_gradient(shape, packed, workspace), dy, dx, threads);
}

// dW per tap = inputᵀ · dY over the output pixels. Both are pixel-major and the product
// reduces over pixels, so dY is transposed once per call (dYᵀ [Cout][pixels]) and each
// tap group computes its slice transposed, dWᵀ = dYᵀ · X_taps, with plain GEMMs: per
// panel of output pixels the input pixels of a group of consecutive taps are gathered
// (zeros where a tap reads padding). Groups span enough taps for a GEMM about 32
// columns wide when Cin is small. Each task transposes its slice back at the end.
namespace {

// Taps per task, rows per panel and each thread's scratch (gathered panel and its dWᵀ slice).
struct WeightGradientTiling {
  int64_t group, groups, rows, per_thread;
  explicit WeightGradientTiling(const ConvShape& s) {
    const int64_t taps_n = s.h.kernel * s.w.kernel, cin = s.in_channels;
    group = taps_per_task(taps_n, cin);
    groups = (taps_n + group - 1) / group;
    rows = panel_rows(group * cin);
    per_thread = rows * group * cin + s.out_channels * group * cin;
  }
};

}  // namespace

int64_t conv2d_backward_weights_workspace(const ConvShape& s, int threads) {
  return s.out_channels * s.batch * s.h.out * s.w.out + std::max(1, threads) * WeightGradientTiling(s).per_thread;
}

void conv2d_backward_weights(const ConvShape& s, const float* x, const float* dy, float* dw, int threads, float* workspace) {
  threads = std::max(1, threads);
  const int64_t cin = s.in_channels, cout = s.out_channels, taps_n = s.h.kernel * s.w.kernel;
  const TapList taps = conv_tap_offsets(s);
  const WeightGradientTiling tiling(s);
  const int64_t group = tiling.group, groups = tiling.groups, rows = tiling.rows, per_thread = tiling.per_thread;
  const TapGrid grid{s.batch, s.h.out, s.w.out, s.h.stride, s.w.stride, s.h.in, s.w.in, cin};
  const int64_t pixels = grid.pixels();
  std::vector<float> own;
  workspace = workspace_or_own(workspace, conv2d_backward_weights_workspace(s, threads), own);
  float* dy_t = workspace;
  float* scratch = workspace + cout * pixels;
  transpose_pixels(pixels, cout, dy, dy_t, threads);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
  for (int64_t gi = 0; gi < groups; ++gi) {
    const int64_t t0 = gi * group, nt = std::min(taps_n, t0 + group) - t0, m = nt * cin;
    float* col = scratch + thread_index() * per_thread;
    float* grad_t = col + rows * group * cin;  // [Cout][nt*Cin]
    std::fill(grad_t, grad_t + cout * m, 0.f);
    for (int64_t p0 = 0; p0 < pixels; p0 += rows) {
      const int64_t p1 = std::min(pixels, p0 + rows);
      gather_taps(grid, x, taps.data() + t0, nt, p0, p1, col);
      gemm_accumulate(cout, m, p1 - p0, dy_t + p0, pixels, col, m, grad_t, m);
    }
    transpose_matrix(cout, m, grad_t, m, dw + t0 * cin * cout, cout);
  }
}

}  // namespace edgegan::cpu
