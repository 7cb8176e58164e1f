#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"

#include <algorithm>
#include <numeric>


namespace edgegan::cpu {

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
