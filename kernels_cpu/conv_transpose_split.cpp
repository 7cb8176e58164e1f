#include <algorithm>

#include "kernels_cpu/conv_transpose.h"
#include "kernels_cpu/gemm.h"

namespace edgegan::cpu {

// Work is one (image, phase_h, phase_w, output row of that phase). Every output
// pixel belongs to exactly one phase, so tasks write disjoint pixels: no atomics,
// no reduction, and the result does not depend on the thread count.
void conv_transpose2d_split(const DeconvShape& s, const SplitDeconvWeights& wts, const float* x,
                            float* y, const Epilogue& ep, int threads) {
  const int64_t cin = s.in_channels, cout = s.out_channels;
  const int64_t sh = s.h.stride, sw = s.w.stride;
  const int64_t rows_per_phase_h = (s.h.out + sh - 1) / sh + 1;  // upper bound on q_end - q_begin
  const int64_t tasks = s.batch * sh * sw * rows_per_phase_h;

#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
  for (int64_t task = 0; task < tasks; ++task) {
    int64_t t = task;
    const int64_t row = t % rows_per_phase_h; t /= rows_per_phase_h;
    const int64_t pw_i = t % sw; t /= sw;
    const int64_t ph_i = t % sh;
    const int64_t n = t / sh;
    const AxisPhase& ph = wts.phases_h[static_cast<size_t>(ph_i)];
    const AxisPhase& pw = wts.phases_w[static_cast<size_t>(pw_i)];
    const int64_t qh = ph.q_begin + row;
    if (qh >= ph.q_end || pw.q_end <= pw.q_begin) continue;

    const int64_t oh = ph.output_of(qh, s.h);
    const int64_t ow0 = pw.output_of(pw.q_begin, s.w);
    const int64_t count = pw.q_end - pw.q_begin;
    float* yrow = y + ((n * s.h.out + oh) * s.w.out + ow0) * cout;
    const int64_t y_pixel_stride = sw * cout;  // consecutive pixels of one phase
    fill_bias(yrow, count, cout, y_pixel_stride, ep.bias);

    const float* sub = wts.sub_kernels[static_cast<size_t>(ph_i * sw + pw_i)];
    const int64_t tw_n = static_cast<int64_t>(pw.taps.size());
    for (size_t th = 0; th < ph.taps.size(); ++th) {
      const int64_t ih = qh - ph.offsets[th];
      if (ih < 0 || ih >= s.h.in) continue;  // trimmed tap: would read padding
      for (int64_t tw = 0; tw < tw_n; ++tw) {
        // Columns q with 0 <= q - offset < in.
        const int64_t off = pw.offsets[static_cast<size_t>(tw)];
        const int64_t q_lo = std::max(pw.q_begin, off);
        const int64_t q_hi = std::min(pw.q_end, s.w.in + off);
        if (q_hi <= q_lo) continue;
        const float* a = x + ((n * s.h.in + ih) * s.w.in + (q_lo - off)) * cin;
        const float* b = sub + (static_cast<int64_t>(th) * tw_n + tw) * cin * cout;
        float* c = yrow + (q_lo - pw.q_begin) * y_pixel_stride;
        gemm_accumulate(q_hi - q_lo, cout, cin, a, cin, b, cout, c, y_pixel_stride);
      }
    }
    apply_activation(yrow, count, cout, y_pixel_stride, ep.activation, ep.alpha);
  }
}

}  // namespace edgegan::cpu
