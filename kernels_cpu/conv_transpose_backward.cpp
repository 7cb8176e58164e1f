#include "kernels_cpu/conv_transpose_backward.h"

#include <algorithm>

#include "kernels_cpu/gemm.h"

namespace edgegan::cpu {

void conv_transpose2d_backward_reference(const DeconvShape& s, const float* x, const float* w, const float* dy, float* dx,
                                         float* dw, float* db) {
  const int64_t cin = s.in_channels, cout = s.out_channels;
  if (dx) std::fill(dx, dx + s.batch * s.h.in * s.w.in * cin, 0.f);
  if (dw) std::fill(dw, dw + cin * cout * s.h.kernel * s.w.kernel, 0.f);
  if (db) bias_backward(s.batch * s.h.out * s.w.out, cout, dy, db);
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t ih = 0; ih < s.h.in; ++ih)
      for (int64_t iw = 0; iw < s.w.in; ++iw)
        for (int64_t kh = 0; kh < s.h.kernel; ++kh)
          for (int64_t kw = 0; kw < s.w.kernel; ++kw) {
            const int64_t oh = ih * s.h.stride - s.h.pad_begin + kh * s.h.dilation;
            const int64_t ow = iw * s.w.stride - s.w.pad_begin + kw * s.w.dilation;
            if (oh < 0 || oh >= s.h.out || ow < 0 || ow >= s.w.out) continue;
            const float* g = dy + ((n * s.h.out + oh) * s.w.out + ow) * cout;
            const float* xp = x + ((n * s.h.in + ih) * s.w.in + iw) * cin;
            for (int64_t ci = 0; ci < cin; ++ci)
              for (int64_t co = 0; co < cout; ++co) {
                const int64_t wi = ((ci * cout + co) * s.h.kernel + kh) * s.w.kernel + kw;
                if (dx) dx[((n * s.h.in + ih) * s.w.in + iw) * cin + ci] += g[co] * w[wi];
                if (dw) dw[wi] += xp[ci] * g[co];
              }
          }
}

void bias_backward(int64_t pixels, int64_t channels, const float* dy, float* db) {
  std::fill(db, db + channels, 0.f);
  for (int64_t p = 0; p < pixels; ++p)
    for (int64_t c = 0; c < channels; ++c) db[c] += dy[p * channels + c];
}

// Input pixel i feeds, through tap t of phase r, the output at q = i + offset[t]
// (o = q*stride + r - pad_begin) when q lies in the phase's [q_begin, q_end).
void conv_transpose2d_backward_input(const DeconvShape& s, const SplitDeconvWeights& w, const float* dy, float* dx, int threads) {
  const int64_t cin = s.in_channels, cout = s.out_channels, sw = s.w.stride;
  const int64_t tasks = s.batch * s.h.in;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
  for (int64_t task = 0; task < tasks; ++task) {
    const int64_t n = task / s.h.in, ih = task % s.h.in;
    float* dx_row = dx + (n * s.h.in + ih) * s.w.in * cin;
    std::fill(dx_row, dx_row + s.w.in * cin, 0.f);
    for (size_t ph_i = 0; ph_i < w.phases_h.size(); ++ph_i) {
      const AxisPhase& ph = w.phases_h[ph_i];
      for (size_t pw_i = 0; pw_i < w.phases_w.size(); ++pw_i) {
        const AxisPhase& pw = w.phases_w[pw_i];
        const float* sub = w.sub_kernels[ph_i * w.phases_w.size() + pw_i];
        const int64_t tw_n = static_cast<int64_t>(pw.taps.size());
        for (size_t th = 0; th < ph.taps.size(); ++th) {
          const int64_t qh = ih + ph.offsets[th];
          if (qh < ph.q_begin || qh >= ph.q_end) continue;  // that output row does not exist: trimmed
          const int64_t oh = ph.output_of(qh, s.h);
          for (int64_t tw = 0; tw < tw_n; ++tw) {
            const int64_t off = pw.offsets[static_cast<size_t>(tw)];
            const int64_t iw_lo = std::max<int64_t>(0, pw.q_begin - off), iw_hi = std::min<int64_t>(s.w.in, pw.q_end - off);
            if (iw_hi <= iw_lo) continue;
            const float* g = dy + ((n * s.h.out + oh) * s.w.out + pw.output_of(iw_lo + off, s.w)) * cout;
            const float* b = sub + (static_cast<int64_t>(th) * tw_n + tw) * cin * cout;  // [Cin][Cout]
            gemm_accumulate_bt(iw_hi - iw_lo, cin, cout, g, sw * cout, b, cout, dx_row + iw_lo * cin, cin);
          }
        }
      }
    }
  }
}

void conv_transpose2d_backward_weights(const DeconvShape& s, const std::vector<AxisPhase>& phases_h,
                                       const std::vector<AxisPhase>& phases_w, const float* x, const float* dy,
                                       const std::vector<float*>& d_sub, int threads) {
  const int64_t cin = s.in_channels, cout = s.out_channels, sw = s.w.stride;
  // One task per (phase, tap): it owns that tap's [Cin][Cout] slice of the gradient.
  struct Task {
    size_t ph, pw;
    int64_t th, tw;
  };
  std::vector<Task> tasks;
  for (size_t ph = 0; ph < phases_h.size(); ++ph)
    for (size_t pw = 0; pw < phases_w.size(); ++pw)
      for (int64_t th = 0; th < static_cast<int64_t>(phases_h[ph].taps.size()); ++th)
        for (int64_t tw = 0; tw < static_cast<int64_t>(phases_w[pw].taps.size()); ++tw) tasks.push_back({ph, pw, th, tw});
  const int64_t n_tasks = static_cast<int64_t>(tasks.size());
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
  for (int64_t t = 0; t < n_tasks; ++t) {
    const Task& task = tasks[static_cast<size_t>(t)];
    const AxisPhase& ph = phases_h[task.ph];
    const AxisPhase& pw = phases_w[task.pw];
    const int64_t tw_n = static_cast<int64_t>(pw.taps.size());
    float* grad = d_sub[task.ph * phases_w.size() + task.pw] + (task.th * tw_n + task.tw) * cin * cout;
    std::fill(grad, grad + cin * cout, 0.f);
    const int64_t offh = ph.offsets[static_cast<size_t>(task.th)], offw = pw.offsets[static_cast<size_t>(task.tw)];
    const int64_t iw_lo = std::max<int64_t>(0, pw.q_begin - offw), iw_hi = std::min<int64_t>(s.w.in, pw.q_end - offw);
    if (iw_hi <= iw_lo) continue;
    for (int64_t n = 0; n < s.batch; ++n)
      for (int64_t ih = 0; ih < s.h.in; ++ih) {
        const int64_t qh = ih + offh;
        if (qh < ph.q_begin || qh >= ph.q_end) continue;
        const float* xr = x + ((n * s.h.in + ih) * s.w.in + iw_lo) * cin;
        const float* g = dy + ((n * s.h.out + ph.output_of(qh, s.h)) * s.w.out + pw.output_of(iw_lo + offw, s.w)) * cout;
        gemm_accumulate_at(cin, cout, iw_hi - iw_lo, xr, cin, g, sw * cout, grad, cout);
      }
  }
}

}  // namespace edgegan::cpu
