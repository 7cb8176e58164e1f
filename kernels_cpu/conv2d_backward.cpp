#include "kernels_cpu/conv2d_backward.h"

#include <algorithm>

#include "kernels_cpu/conv_transpose_backward.h"
#include "kernels_cpu/gemm.h"
#include "kernels_cpu/tap_gather.h"

namespace edgegan::cpu {

void conv2d_backward_reference(const ConvShape& s, const float* x, const float* w, const float* dy, float* dx, float* dw, float* db) {
  const int64_t cin = s.in_channels, cout = s.out_channels;
  if (dx) std::fill(dx, dx + s.batch * s.h.in * s.w.in * cin, 0.f);
  if (dw) std::fill(dw, dw + cout * cin * s.h.kernel * s.w.kernel, 0.f);
  if (db) bias_backward(s.batch * s.h.out * s.w.out, cout, dy, db);
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t oh = 0; oh < s.h.out; ++oh)
      for (int64_t ow = 0; ow < s.w.out; ++ow)
        for (int64_t kh = 0; kh < s.h.kernel; ++kh)
          for (int64_t kw = 0; kw < s.w.kernel; ++kw) {
            const int64_t ih = oh * s.h.stride - s.h.pad_begin + kh * s.h.dilation;
            const int64_t iw = ow * s.w.stride - s.w.pad_begin + kw * s.w.dilation;
            if (ih < 0 || ih >= s.h.in || iw < 0 || iw >= s.w.in) continue;
            const float* g = dy + ((n * s.h.out + oh) * s.w.out + ow) * cout;
            for (int64_t co = 0; co < cout; ++co)
              for (int64_t ci = 0; ci < cin; ++ci) {
                const int64_t wi = ((co * cin + ci) * s.h.kernel + kh) * s.w.kernel + kw;
                const int64_t xi = ((n * s.h.in + ih) * s.w.in + iw) * cin + ci;
                if (dx) dx[xi] += g[co] * w[wi];
                if (dw) dw[wi] += x[xi] * g[co];
              }
          }
}

namespace {

// The transposed conv that maps dY to dX: reads the conv's output, writes its input.
DeconvShape input_gradient_shape(const ConvShape& s) {
  DeconvShape g;
  g.batch = s.batch;
  g.in_channels = s.out_channels;  // the transposed conv reads dY ...
  g.out_channels = s.in_channels;  // ... and writes dX
  auto axis = [](const ConvAxis& a) {
    DeconvAxis d{a.out, a.kernel, a.stride, a.dilation, a.pad_begin, 0, a.in};
    // Whatever pad_end makes the output length the conv's input length (it may be
    // negative: rows the conv never read get zero gradient).
    d.pad_end = (a.out - 1) * a.stride - a.pad_begin + a.dilation * (a.kernel - 1) + 1 - a.in;
    return d;
  };
  g.h = axis(s.h);
  g.w = axis(s.w);
  return g;
}

// dX is the transposed conv of dY: per phase of dX (pixels stride apart), a dense
// correlation of dY with the phase's taps. Per panel of the phase's pixels the dY pixels
// of every tap are gathered into one row (zeros where a tap reads outside dY),
// multiply(phase, col, rows, out) adds the panel's [rows][Cin] product into `out`, whose
// rows are then written to their (strided) dX pixels. Tasks own their dX pixels.
template <typename Multiply>
void input_gradient_by_phase(const DeconvShape& s, const std::vector<AxisPhase>& phases_h, const std::vector<AxisPhase>& phases_w,
                             const std::vector<bool>& has_kernel, const float* dy, float* dx, int threads, Multiply multiply) {
  threads = std::max(1, threads);
  const int64_t cout = s.in_channels, cin = s.out_channels;  // of the conv
  std::fill(dx, dx + s.batch * s.h.out * s.w.out * cin, 0.f);  // pixels no phase tap reaches keep 0
  struct Phase {
    size_t index;
    const AxisPhase *h, *w;
    std::vector<TapOffset> taps;
    TapGrid grid;
  };
  std::vector<Phase> phases;
  int64_t k_max = 1;
  for (size_t ph = 0; ph < phases_h.size(); ++ph)
    for (size_t pw = 0; pw < phases_w.size(); ++pw) {
      const AxisPhase& h = phases_h[ph];
      const AxisPhase& w = phases_w[pw];
      const size_t index = ph * phases_w.size() + pw;
      if (!has_kernel[index] || h.taps.empty() || w.taps.empty() || h.q_end <= h.q_begin || w.q_end <= w.q_begin) continue;
      Phase p{index, &h, &w, {}, {s.batch, h.q_end - h.q_begin, w.q_end - w.q_begin, 1, 1, s.h.in, s.w.in, cout}};
      // dX pixel q of the phase reads dY pixel q - offset[t].
      for (int64_t oh : h.offsets)
        for (int64_t ow : w.offsets) p.taps.push_back({h.q_begin - oh, w.q_begin - ow});
      k_max = std::max(k_max, static_cast<int64_t>(p.taps.size()) * cout);
      phases.push_back(std::move(p));
    }
  const int64_t rows = panel_rows(k_max);
  struct Task {
    size_t phase;
    int64_t p0, p1;
  };
  std::vector<Task> tasks;
  for (size_t i = 0; i < phases.size(); ++i)
    for (int64_t p0 = 0; p0 < phases[i].grid.pixels(); p0 += rows) tasks.push_back({i, p0, std::min(phases[i].grid.pixels(), p0 + rows)});
  const int64_t per_thread = rows * (k_max + cin);
  std::vector<float> scratch(static_cast<size_t>(threads * per_thread));
  const int64_t n_tasks = static_cast<int64_t>(tasks.size());
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
  for (int64_t t = 0; t < n_tasks; ++t) {
    const Task& task = tasks[static_cast<size_t>(t)];
    const Phase& p = phases[task.phase];
    const int64_t m = task.p1 - task.p0;
    float* col = scratch.data() + thread_index() * per_thread;
    float* out = col + rows * k_max;
    gather_taps(p.grid, dy, p.taps.data(), static_cast<int64_t>(p.taps.size()), task.p0, task.p1, col);
    std::fill(out, out + m * cin, 0.f);
    multiply(p.index, col, m, out);
    int64_t n = task.p0 / (p.grid.rows * p.grid.cols), a = (task.p0 / p.grid.cols) % p.grid.rows, b = task.p0 % p.grid.cols;
    for (int64_t r = 0; r < m; ++r) {
      const int64_t ih = p.h->output_of(p.h->q_begin + a, s.h), iw = p.w->output_of(p.w->q_begin + b, s.w);
      std::copy(out + r * cin, out + (r + 1) * cin, dx + ((n * s.h.out + ih) * s.w.out + iw) * cin);
      if (++b == p.grid.cols) {
        b = 0;
        if (++a == p.grid.rows) a = 0, ++n;
      }
    }
  }
}

}  // namespace

ConvInputGradient make_conv2d_input_gradient(const ConvShape& s, const float* packed) {
  ConvInputGradient g;
  g.shape = input_gradient_shape(s);
  g.split.phases_h = split_deconv_axis(g.shape.h);
  g.split.phases_w = split_deconv_axis(g.shape.w);
  // Sub-kernel tap [C_in = Cout][C_out = Cin] is the conv's tap [Cin][Cout] transposed (no flip).
  const int64_t cin = s.in_channels, cout = s.out_channels, kw = s.w.kernel;
  for (const AxisPhase& ph : g.split.phases_h)
    for (const AxisPhase& pw : g.split.phases_w) {
      const int64_t th_n = static_cast<int64_t>(ph.taps.size()), tw_n = static_cast<int64_t>(pw.taps.size());
      std::vector<float> sub(static_cast<size_t>(th_n * tw_n * cin * cout));
      for (int64_t th = 0; th < th_n; ++th)
        for (int64_t tw = 0; tw < tw_n; ++tw) {
          const float* src = packed + (ph.taps[static_cast<size_t>(th)] * kw + pw.taps[static_cast<size_t>(tw)]) * cin * cout;
          float* dst = sub.data() + (th * tw_n + tw) * cin * cout;
          for (int64_t ci = 0; ci < cin; ++ci)
            for (int64_t co = 0; co < cout; ++co) dst[co * cin + ci] = src[ci * cout + co];
        }
      g.sub_kernels.push_back(std::move(sub));
    }
  for (const auto& sub : g.sub_kernels) g.split.sub_kernels.push_back(sub.empty() ? nullptr : sub.data());
  return g;
}

// With the plan: one GEMM per panel over all the phase's taps, sub-kernel [taps·Cout][Cin].
void conv2d_backward_input(const ConvInputGradient& plan, const float* dy, float* dx, int threads) {
  const int64_t cin = plan.shape.out_channels;
  std::vector<bool> has_kernel;
  for (const float* k : plan.split.sub_kernels) has_kernel.push_back(k != nullptr);
  input_gradient_by_phase(plan.shape, plan.split.phases_h, plan.split.phases_w, has_kernel, dy, dx, threads,
                          [&](size_t phase, const float* col, int64_t m, float* out) {
                            const AxisPhase& h = plan.split.phases_h[phase / plan.split.phases_w.size()];
                            const AxisPhase& w = plan.split.phases_w[phase % plan.split.phases_w.size()];
                            const int64_t k = static_cast<int64_t>(h.taps.size() * w.taps.size()) * plan.shape.in_channels;
                            gemm_accumulate(m, cin, k, col, k, plan.split.sub_kernels[phase], cin, out, cin);
                          });
}

namespace {

// For few input channels (an image, e.g. a discriminator's first conv), where the phase
// GEMMs would be Cin wide: col = dY · Wᵀ per panel of output pixels ([taps][Cin] per
// pixel, one GEMM with N = taps*Cin), added into dX (col2im). One task per image, which
// owns that image's dX.
void conv2d_backward_input_col2im(const ConvShape& s, const float* packed, const float* dy, float* dx, int threads) {
  threads = std::max(1, threads);
  const int64_t cin = s.in_channels, cout = s.out_channels, kw = s.w.kernel, n_cols = s.h.kernel * kw * cin;
  const int64_t image_in = s.h.in * s.w.in * cin, image_pixels = s.h.out * s.w.out, rows = panel_rows(n_cols);
  std::fill(dx, dx + s.batch * image_in, 0.f);
  std::vector<float> scratch(static_cast<size_t>(threads * rows * n_cols));
  // packed is [taps*Cin][Cout]; each panel multiplies by its transpose: transpose once.
  std::vector<float> packed_t(static_cast<size_t>(n_cols * cout));
  transpose_matrix(n_cols, cout, packed, cout, packed_t.data(), n_cols);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
  for (int64_t n = 0; n < s.batch; ++n) {
    float* col = scratch.data() + thread_index() * rows * n_cols;
    float* image = dx + n * image_in;
    for (int64_t p0 = 0; p0 < image_pixels; p0 += rows) {
      const int64_t m = std::min(image_pixels, p0 + rows) - p0;
      std::fill(col, col + m * n_cols, 0.f);
      gemm_accumulate(m, n_cols, cout, dy + (n * image_pixels + p0) * cout, cout, packed_t.data(), n_cols, col, n_cols);
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

// Per tap, the GEMM needs the conv's [Cin][Cout] tap transposed. The weights change
// every step, so they are transposed once per call (one pass over them) rather than
// re-packed inside the GEMM for every phase and panel.
void conv2d_backward_input(const ConvShape& shape, const float* packed, const float* dy, float* dx, int threads) {
  if (shape.in_channels < 16) return conv2d_backward_input_col2im(shape, packed, dy, dx, threads);
  const DeconvShape s = input_gradient_shape(shape);
  const std::vector<AxisPhase> phases_h = split_deconv_axis(s.h), phases_w = split_deconv_axis(s.w);
  const int64_t cin = shape.in_channels, cout = shape.out_channels, kw = shape.w.kernel;
  const int64_t taps_n = shape.h.kernel * kw;
  std::vector<float> packed_t(static_cast<size_t>(taps_n * cin * cout));  // [tap][Cout][Cin]
  for (int64_t t = 0; t < taps_n; ++t) transpose_matrix(cin, cout, packed + t * cin * cout, cout, packed_t.data() + t * cout * cin, cin);
  const std::vector<bool> has_kernel(phases_h.size() * phases_w.size(), true);
  input_gradient_by_phase(s, phases_h, phases_w, has_kernel, dy, dx, threads, [&](size_t phase, const float* col, int64_t m, float* out) {
    const AxisPhase& h = phases_h[phase / phases_w.size()];
    const AxisPhase& w = phases_w[phase % phases_w.size()];
    const int64_t k = static_cast<int64_t>(h.taps.size() * w.taps.size()) * cout;
    int64_t j = 0;
    for (int64_t th : h.taps)
      for (int64_t tw : w.taps) gemm_accumulate(m, cin, cout, col + cout * j++, k, packed_t.data() + (th * kw + tw) * cout * cin, cin, out, cin);
  });
}

// dW per tap = inputᵀ · dY over the output pixels: per panel of output pixels the input
// pixels of a group of consecutive taps are gathered (zeros where the tap reads
// padding) and one GEMM adds the group's slice [taps][Cin][Cout] (dY read in place).
// Groups span enough taps for a GEMM of at least 32 rows when Cin is small.
void conv2d_backward_weights(const ConvShape& s, const float* x, const float* dy, float* dw, int threads) {
  threads = std::max(1, threads);
  const int64_t cin = s.in_channels, cout = s.out_channels, taps_n = s.h.kernel * s.w.kernel;
  std::vector<TapOffset> taps;
  for (int64_t kh = 0; kh < s.h.kernel; ++kh)
    for (int64_t kw = 0; kw < s.w.kernel; ++kw)
      taps.push_back({kh * s.h.dilation - s.h.pad_begin, kw * s.w.dilation - s.w.pad_begin});
  const int64_t group = std::clamp<int64_t>((32 + cin - 1) / cin, 1, taps_n), groups = (taps_n + group - 1) / group;
  const TapGrid grid{s.batch, s.h.out, s.w.out, s.h.stride, s.w.stride, s.h.in, s.w.in, cin};
  const int64_t rows = panel_rows(group * cin), pixels = grid.pixels();
  std::vector<float> scratch(static_cast<size_t>(threads * rows * group * cin));
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
  for (int64_t gi = 0; gi < groups; ++gi) {
    const int64_t t0 = gi * group, nt = std::min(taps_n, t0 + group) - t0, m = nt * cin;
    float* grad = dw + t0 * cin * cout;
    std::fill(grad, grad + m * cout, 0.f);
    float* col = scratch.data() + thread_index() * rows * group * cin;
    for (int64_t p0 = 0; p0 < pixels; p0 += rows) {
      const int64_t p1 = std::min(pixels, p0 + rows);
      gather_taps(grid, x, taps.data() + t0, nt, p0, p1, col);
      gemm_accumulate_at(m, cout, p1 - p0, col, m, dy + p0 * cout, cout, grad, cout);
    }
  }
}

}  // namespace edgegan::cpu
