#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"

#include <algorithm>
#include <numeric>

#include "kernels_cpu/gemm/gemm.h"  // transpose_matrix

namespace edgegan::cpu {

std::vector<AxisPhase> split_conv_transpose_axis(const ConvAxis& axis) {
  std::vector<AxisPhase> phases(static_cast<size_t>(axis.stride));
  for (int64_t r = 0; r < axis.stride; ++r) {
    AxisPhase& p = phases[static_cast<size_t>(r)];
    p.residue = r;
    for (int64_t tap = 0; tap < axis.kernel; ++tap) {
      const int64_t reach = tap * axis.dilation;
      if (reach % axis.stride == r) {
        p.taps.push_back(tap);
        p.offsets.push_back((reach - r) / axis.stride);
      }
    }
    // Outputs of this phase: o = q*stride + r - pad_begin with 0 <= o < out.
    p.q_begin = floor_div(axis.pad_begin - r + axis.stride - 1, axis.stride);
    p.q_end = floor_div(axis.out - 1 + axis.pad_begin - r, axis.stride) + 1;
    if (p.q_end < p.q_begin) p.q_end = p.q_begin;
  }
  return phases;
}

std::vector<std::vector<float>> pack_conv_transpose2d_weights(const ConvShape& s,
                                                          const std::vector<AxisPhase>& phases_h,
                                                          const std::vector<AxisPhase>& phases_w,
                                                          const float* w, int64_t panel_columns) {
  const int64_t cin = s.in_channels, cout = s.out_channels, kh = s.h.kernel, kw = s.w.kernel;
  const PanelLayout layout(cin, cout, panel_columns);
  std::vector<std::vector<float>> packed;
  for (const AxisPhase& ph : phases_h) {
    for (const AxisPhase& pw : phases_w) {
      const int64_t th_n = static_cast<int64_t>(ph.taps.size());
      const int64_t tw_n = static_cast<int64_t>(pw.taps.size());
      std::vector<float> sub(static_cast<size_t>(th_n * tw_n * cin * cout));
      for (int64_t th = 0; th < th_n; ++th)
        for (int64_t tw = 0; tw < tw_n; ++tw)
          for (int64_t ci = 0; ci < cin; ++ci)
            for (int64_t co = 0; co < cout; ++co)
              sub[static_cast<size_t>((th * tw_n + tw) * cin * cout + layout.index(ci, co))] =
                  w[((ci * cout + co) * kh + ph.taps[th]) * kw + pw.taps[tw]];
      packed.push_back(std::move(sub));
    }
  }
  return packed;
}

void assemble_conv_transpose2d_full_kernel(const ConvShape& s, const ConvTranspose2DWeights& w, FullKernelLayout layout, float* out) {
  const int64_t cin = s.in_channels, cout = s.out_channels, kw = s.w.kernel, taps = s.h.kernel * s.w.kernel;
  const PanelLayout tap_layout = w.tap_layout(s);
  size_t phase = 0;
  for (const AxisPhase& ph : w.phases_h) {
    for (const AxisPhase& pw : w.phases_w) {
      const float* sub = w.sub_kernels[phase++];
      const int64_t tw_n = static_cast<int64_t>(pw.taps.size());
      for (size_t th = 0; th < ph.taps.size(); ++th)
        for (int64_t tw = 0; tw < tw_n; ++tw) {
          const int64_t tap = ph.taps[th] * kw + pw.taps[static_cast<size_t>(tw)];
          const float* src = sub + (static_cast<int64_t>(th) * tw_n + tw) * cin * cout;
          // Panel by panel: each is a plain [Cin][width] block.
          for (int64_t p0 = 0; p0 < cout; p0 += tap_layout.panel) {
            const int64_t width = tap_layout.width(p0);
            const float* panel = src + tap_layout.index(0, p0);
            if (layout == FullKernelLayout::kTapsFirstTransposed) {
              transpose_matrix(cin, width, panel, width, out + tap * cout * cin + p0 * cin, cin);
              continue;
            }
            for (int64_t ci = 0; ci < cin; ++ci) {
              float* dst = layout == FullKernelLayout::kTapsFirst ? out + (tap * cin + ci) * cout : out + (ci * taps + tap) * cout;
              std::copy(panel + ci * width, panel + (ci + 1) * width, dst + p0);
            }
          }
        }
    }
  }
}

void repanel_matrices(int64_t count, int64_t rows, int64_t cols, int64_t from_panel, int64_t to_panel, const float* src,
                      float* dst) {
  const PanelLayout from(rows, cols, from_panel), to(rows, cols, to_panel);
  for (int64_t m = 0; m < count; ++m) {
    const float* a = src + m * rows * cols;
    float* b = dst + m * rows * cols;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) b[to.index(r, c)] = a[from.index(r, c)];
  }
}

}  // namespace edgegan::cpu
