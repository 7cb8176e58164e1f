#include "kernels_common/conv_transpose2d_phases.h"

#include <algorithm>

#include "kernels_common/transpose_matrix.h"

namespace edgegan::kernels {

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

void assemble_conv_transpose2d_full_kernel(const ConvShape& s, const ConvTranspose2DSubKernels& w, FullKernelLayout layout, float* out) {
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

ConvShape conv_transpose2d_group_shape(const ConvShape& s, int64_t groups) {
  ConvShape g = s;
  g.in_channels = s.in_channels / groups;
  g.out_channels = s.out_channels / groups;
  return g;
}

std::vector<ConvTranspose2DSubKernels> conv_transpose2d_group_sub_kernels(const ConvShape& s, int64_t groups,
                                                                          const ConvTranspose2DSubKernels& w) {
  const ConvShape gs = conv_transpose2d_group_shape(s, groups);
  std::vector<ConvTranspose2DSubKernels> views;
  for (int64_t g = 0; g < groups; ++g) {
    ConvTranspose2DSubKernels v;
    v.phases_h = w.phases_h;
    v.phases_w = w.phases_w;
    v.panel_columns = w.panel_columns;
    const size_t phases = w.phases_h.size() * w.phases_w.size();
    for (size_t p = 0; p < phases; ++p) {
      const int64_t taps = static_cast<int64_t>(w.phases_h[p / w.phases_w.size()].taps.size() * w.phases_w[p % w.phases_w.size()].taps.size());
      const int64_t offset = g * taps * gs.in_channels * gs.out_channels;
      if (w.fp16()) {
        const uint16_t* base = w.sub_kernels_f16[p];
        v.sub_kernels_f16.push_back(base ? base + offset : nullptr);
      } else {
        const float* base = w.sub_kernels[p];
        v.sub_kernels.push_back(base ? base + offset : nullptr);
      }
    }
    views.push_back(std::move(v));
  }
  return views;
}

}  // namespace edgegan::kernels
