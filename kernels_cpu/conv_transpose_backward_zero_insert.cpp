// Zero-insertion backward of the transposed convolution: the baseline for the
// split backward (conv_transpose_backward.h), on the same GEMM.
//
// Per axis the forward (conv_transpose_zero_insert.cpp) reads the zero-inserted input
// Z of length out + dilation*(kernel-1), input pixel i sitting at
// z(i) = i*stride - pad_begin + dilation*(kernel-1), and computes
//   y[o] = sum_t Z[o + t*dilation] · W[kernel-1-t].
// Hence, with P = dY padded by dilation*(kernel-1) on both sides and u = kernel-1-t,
//   dZ[z]      = sum_u P[z + u*dilation] · W[u]ᵀ          (every z, inserted or not)
//   dW[k-1-t]  = sum_o Z[o + t*dilation]ᵀ · dY[o]          (every o, zeros included)
#include <algorithm>

#include "kernels_cpu/conv_transpose_backward.h"
#include "kernels_cpu/gemm.h"

namespace edgegan::cpu {
namespace {

int64_t halo(const DeconvAxis& a) { return a.dilation * (a.kernel - 1); }
int64_t zero_inserted_length(const DeconvAxis& a) { return a.out + halo(a); }
int64_t padded_output_length(const DeconvAxis& a) { return a.out + 2 * halo(a); }
// Where input pixel i sits in Z (may fall outside [0, length): then nothing reads it).
int64_t z_of(int64_t i, const DeconvAxis& a) { return i * a.stride - a.pad_begin + halo(a); }

}  // namespace

int64_t conv_transpose2d_zero_insert_backward_input_workspace(const DeconvShape& s) {
  const int64_t padded = saturating_product({s.batch, padded_output_length(s.h), padded_output_length(s.w), s.out_channels});
  const int64_t dz = saturating_product({s.batch, zero_inserted_length(s.h), zero_inserted_length(s.w), s.in_channels});
  return padded + dz;  // each at most 2^62: no overflow
}

void conv_transpose2d_zero_insert_backward_input(const DeconvShape& s, const float* w, const float* dy, float* dx, float* ws,
                                                 int threads) {
  const int64_t cin = s.in_channels, cout = s.out_channels, kw = s.w.kernel;
  const int64_t ph = padded_output_length(s.h), pw = padded_output_length(s.w);
  const int64_t zh = zero_inserted_length(s.h), zw = zero_inserted_length(s.w);
  float* p = ws;                               // [N][ph][pw][Cout]
  float* dz = ws + s.batch * ph * pw * cout;   // [N][zh][zw][Cin]
  std::fill(p, p + s.batch * ph * pw * cout, 0.f);
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t oh = 0; oh < s.h.out; ++oh) {
      const float* src = dy + (n * s.h.out + oh) * s.w.out * cout;
      std::copy(src, src + s.w.out * cout, p + ((n * ph + oh + halo(s.h)) * pw + halo(s.w)) * cout);
    }

  const int64_t tasks = s.batch * zh;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
  for (int64_t task = 0; task < tasks; ++task) {
    const int64_t n = task / zh, zr = task % zh;
    float* row = dz + (n * zh + zr) * zw * cin;
    std::fill(row, row + zw * cin, 0.f);
    for (int64_t uh = 0; uh < s.h.kernel; ++uh)
      for (int64_t uw = 0; uw < kw; ++uw) {
        const float* a = p + ((n * ph + zr + uh * s.h.dilation) * pw + uw * s.w.dilation) * cout;
        gemm_accumulate_bt(zw, cin, cout, a, cout, w + (uh * kw + uw) * cin * cout, cout, row, cin);
      }
  }

  // Keep the input's positions of dZ; the inserted ones are dropped.
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t ih = 0; ih < s.h.in; ++ih) {
      const int64_t zr = z_of(ih, s.h);
      for (int64_t iw = 0; iw < s.w.in; ++iw) {
        const int64_t zc = z_of(iw, s.w);
        float* dst = dx + ((n * s.h.in + ih) * s.w.in + iw) * cin;
        if (zr < 0 || zr >= zh || zc < 0 || zc >= zw) {
          std::fill(dst, dst + cin, 0.f);  // the forward never read this pixel
        } else {
          const float* src = dz + ((n * zh + zr) * zw + zc) * cin;
          std::copy(src, src + cin, dst);
        }
      }
    }
}

int64_t conv_transpose2d_zero_insert_backward_weights_workspace(const DeconvShape& s) {
  return saturating_product({s.batch, zero_inserted_length(s.h), zero_inserted_length(s.w), s.in_channels});
}

void conv_transpose2d_zero_insert_backward_weights(const DeconvShape& s, const float* x, const float* dy, float* dw, float* z,
                                                   int threads) {
  const int64_t cin = s.in_channels, cout = s.out_channels, kh = s.h.kernel, kw = s.w.kernel;
  const int64_t zh = zero_inserted_length(s.h), zw = zero_inserted_length(s.w);
  // Z exactly as the forward builds it.
  std::fill(z, z + s.batch * zh * zw * cin, 0.f);
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t ih = 0; ih < s.h.in; ++ih) {
      const int64_t r = z_of(ih, s.h);
      if (r < 0 || r >= zh) continue;
      for (int64_t iw = 0; iw < s.w.in; ++iw) {
        const int64_t c = z_of(iw, s.w);
        if (c < 0 || c >= zw) continue;
        const float* src = x + ((n * s.h.in + ih) * s.w.in + iw) * cin;
        std::copy(src, src + cin, z + ((n * zh + r) * zw + c) * cin);
      }
    }

  // One task per full-kernel tap: it owns that tap's [Cin][Cout] slice.
  const int64_t taps = kh * kw;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
  for (int64_t t = 0; t < taps; ++t) {
    const int64_t th = t / kw, tw = t % kw;  // correlation taps; the kernel tap is flipped
    float* grad = dw + ((kh - 1 - th) * kw + (kw - 1 - tw)) * cin * cout;
    std::fill(grad, grad + cin * cout, 0.f);
    for (int64_t n = 0; n < s.batch; ++n)
      for (int64_t oh = 0; oh < s.h.out; ++oh) {
        const float* a = z + ((n * zh + oh + th * s.h.dilation) * zw + tw * s.w.dilation) * cin;
        const float* g = dy + (n * s.h.out + oh) * s.w.out * cout;
        gemm_accumulate_at(cin, cout, s.w.out, a, cin, g, cout, grad, cout);
      }
  }
}

void scatter_full_deconv_kernel(const DeconvShape& s, const std::vector<AxisPhase>& phases_h, const std::vector<AxisPhase>& phases_w,
                                const float* full, const std::vector<float*>& sub_kernels) {
  const int64_t cin = s.in_channels, cout = s.out_channels, kw = s.w.kernel;
  size_t phase = 0;
  for (const AxisPhase& ph : phases_h)
    for (const AxisPhase& pw : phases_w) {
      float* sub = sub_kernels[phase++];
      const int64_t tw_n = static_cast<int64_t>(pw.taps.size());
      if (!sub) continue;
      for (size_t th = 0; th < ph.taps.size(); ++th)
        for (int64_t tw = 0; tw < tw_n; ++tw) {
          const int64_t tap = ph.taps[th] * kw + pw.taps[static_cast<size_t>(tw)];
          std::copy(full + tap * cin * cout, full + (tap + 1) * cin * cout, sub + (static_cast<int64_t>(th) * tw_n + tw) * cin * cout);
        }
    }
}

}  // namespace edgegan::cpu
