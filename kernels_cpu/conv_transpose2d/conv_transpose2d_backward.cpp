#include "kernels_cpu/conv_transpose2d/conv_transpose2d_backward.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_grouped.h"

#include <algorithm>

#include "kernels_cpu/conv2d/conv2d_trimmed.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_split.h"
#include "kernels_cpu/common/tap_gather.h"
#include "kernels_cpu/common/epilogue.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"

namespace edgegan::cpu {

void conv_transpose2d_backward_reference(const ConvShape& s, const float* x, const float* w, const float* dy, float* dx, float* dw,
                                         float* db) {
  conv_transpose2d_grouped_backward_reference(s, 1, x, w, dy, dx, dw, db);
}

// dX is the strided convolution of dY: input pixel i reads, through full-kernel tap t,
// the output pixel o = i*stride - pad_begin + t*dilation (none of them an inserted
// zero). That is a convolution with dY as its input and dX as its output, whose packed
// weights [kh][kw][Cout][Cin] are the full kernel with each tap transposed.
namespace {

// The convolution that maps dY to dX: output position i reads input i*stride - pad_begin
// + t*dilation; the trimmed conv reads only positions inside dY, so pad_end plays no
// part beyond fixing the length.
ConvShape input_gradient_conv(const ConvShape& s) {
  auto axis = [](const ConvAxis& a) {
    ConvAxis c{a.out, a.kernel, a.stride, a.dilation, a.pad_begin, 0, a.in};
    c.pad_end = (a.in - 1) * a.stride - a.pad_begin + a.dilation * (a.kernel - 1) + 1 - a.out;
    return c;
  };
  return {s.batch, s.out_channels, s.in_channels, axis(s.h), axis(s.w)};
}

int64_t full_kernel_floats(const ConvShape& s) { return s.in_channels * s.out_channels * s.h.kernel * s.w.kernel; }

// Every tap of every phase: where it reads dY.
int64_t phase_taps(const std::vector<AxisPhase>& phases_h, const std::vector<AxisPhase>& phases_w) {
  int64_t n = 0;
  for (const AxisPhase& ph : phases_h)
    for (const AxisPhase& pw : phases_w) n += static_cast<int64_t>(ph.taps.size() * pw.taps.size());
  return n;
}

}  // namespace

int64_t conv_transpose2d_backward_input_workspace(const ConvShape& s, int threads) {
  return full_kernel_floats(s) + (threads > 0 ? conv2d_trimmed_workspace(input_gradient_conv(s), threads) : 0);
}

void conv_transpose2d_backward_input(const ConvShape& s, const ConvTranspose2DWeights& w, const float* dy, float* dx, float* workspace,
                                     int threads, int64_t workspace_floats) {
  assemble_conv_transpose2d_full_kernel(s, w, FullKernelLayout::kTapsFirstTransposed, workspace);
  const ConvShape conv = input_gradient_conv(s);
  const bool fits = workspace_floats >= conv_transpose2d_backward_input_workspace(s, std::max(1, threads));  // computed, not allocated
  conv2d_trimmed(conv, workspace, dy, dx, Epilogue{}, threads, fits ? workspace + full_kernel_floats(s) : nullptr);
}

int64_t conv_transpose2d_backward_weights_workspace(const ConvShape& s, const std::vector<AxisPhase>& phases_h,
                                                   const std::vector<AxisPhase>& phases_w, int threads, int64_t panel_columns) {
  const TapGrid grid{s.batch, s.h.in, s.w.in, s.h.stride, s.w.stride, s.h.out, s.w.out, s.out_channels};
  return accumulate_tap_outer_products_workspace(grid, s.in_channels, phase_taps(phases_h, phases_w), threads, panel_columns);
}

// dW of one tap = sum over input pixels i of x[i]ᵀ · dY[o(i, tap)]: x read in place in
// panels of pixels, the tap's dY pixels gathered (zeros where o falls outside the
// output); K = a panel per GEMM.
void conv_transpose2d_backward_weights(const ConvShape& s, const std::vector<AxisPhase>& phases_h,
                                       const std::vector<AxisPhase>& phases_w, const float* x, const float* dy,
                                       const std::vector<float*>& d_sub, int threads, int64_t panel_columns, float* workspace) {
  const int64_t cin = s.in_channels, cout = s.out_channels, n = phase_taps(phases_h, phases_w);
  // Every tap of every phase: where it reads dY, and its [Cin][Cout] slice of the phase's sub-kernel.
  TapList taps(static_cast<size_t>(n));
  InlineArray<float*, 128> slices(static_cast<size_t>(n));
  size_t k = 0;
  for (size_t ph = 0; ph < phases_h.size(); ++ph)
    for (size_t pw = 0; pw < phases_w.size(); ++pw) {
      const int64_t th_n = static_cast<int64_t>(phases_h[ph].taps.size()), tw_n = static_cast<int64_t>(phases_w[pw].taps.size());
      for (int64_t th = 0; th < th_n; ++th)
        for (int64_t tw = 0; tw < tw_n; ++tw, ++k) {
          taps[k] = {phases_h[ph].taps[static_cast<size_t>(th)] * s.h.dilation - s.h.pad_begin,
                     phases_w[pw].taps[static_cast<size_t>(tw)] * s.w.dilation - s.w.pad_begin};
          slices[k] = d_sub[ph * phases_w.size() + pw] + (th * tw_n + tw) * cin * cout;
        }
    }
  const TapGrid grid{s.batch, s.h.in, s.w.in, s.h.stride, s.w.stride, s.h.out, s.w.out, cout};
  accumulate_tap_outer_products(grid, x, cin, dy, taps.data(), n, slices.data(), threads, panel_columns, workspace);
}

}  // namespace edgegan::cpu
