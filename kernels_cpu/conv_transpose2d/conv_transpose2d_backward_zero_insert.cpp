// Zero-insertion backward of the transposed convolution: the baseline for the
// split backward (conv_transpose2d_backward.h), on the same GEMM.
//
// Per axis the forward (conv_transpose2d_zero_insert.cpp) reads the zero-inserted input
// Z of length out + dilation*(kernel-1), input pixel i sitting at
// z(i) = i*stride - pad_begin + dilation*(kernel-1), and computes
//   y[o] = sum_t Z[o + t*dilation] · W[kernel-1-t].
// Hence, with P = dY padded by dilation*(kernel-1) on both sides and u = kernel-1-t,
//   dZ[z]      = sum_u P[z + u*dilation] · W[u]ᵀ          (every z, inserted or not)
//   dW[k-1-t]  = sum_o Z[o + t*dilation]ᵀ · dY[o]          (every o, zeros included)
// Both run with the split backward's panel GEMMs (tap_gather.h) on the same GEMM.
#include <algorithm>

#include "kernels_cpu/conv2d/conv2d_backward.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_backward_zero_insert.h"
#include "kernels_cpu/gemm/gemm.h"
#include "kernels_cpu/common/tap_gather.h"
#include "kernels_common/conv_geometry.h"

namespace edgegan::cpu {
namespace {

int64_t halo(const ConvAxis& a) { return a.dilation * (a.kernel - 1); }
int64_t zero_inserted_length(const ConvAxis& a) { return a.out + halo(a); }
// Where input pixel i sits in Z (may fall outside [0, length): then nothing reads it).
int64_t z_of(int64_t i, const ConvAxis& a) { return i * a.stride - a.pad_begin + halo(a); }

}  // namespace

// dZ, the gradient of the whole zero-inserted input, is materialised in the workspace.
int64_t conv_transpose2d_zero_insert_backward_input_workspace(const ConvShape& s) {
  return saturating_product({s.batch, zero_inserted_length(s.h), zero_inserted_length(s.w), s.in_channels});
}

// dZ is a stride-1 correlation of the padded dY with the full kernel: computed, like the
// split backward, one GEMM per panel of (here: Z) pixels over gathered taps, so the two
// differ in the products they form, not in how well the GEMM is fed.
void conv_transpose2d_zero_insert_backward_input(const ConvShape& s, const float* w, const float* dy, float* dx, float* dz,
                                                 int threads) {
  const int64_t cin = s.in_channels, cout = s.out_channels, taps_n = s.h.kernel * s.w.kernel;
  const int64_t zh = zero_inserted_length(s.h), zw = zero_inserted_length(s.w);
  std::vector<float> kernel(static_cast<size_t>(cin * taps_n * cout));  // [kh][kw][Cout][Cin]
  for (int64_t t = 0; t < taps_n; ++t) transpose_matrix(cin, cout, w + t * cin * cout, cout, kernel.data() + t * cout * cin, cin);
  // Z pixel z reads P[z + u*dilation] = dY[z + u*dilation - halo] (zero outside dY: the padding).
  std::vector<TapOffset> taps;
  for (int64_t uh = 0; uh < s.h.kernel; ++uh)
    for (int64_t uw = 0; uw < s.w.kernel; ++uw) taps.push_back({uh * s.h.dilation - halo(s.h), uw * s.w.dilation - halo(s.w)});
  gemm_over_gathered_taps(TapGrid{s.batch, zh, zw, 1, 1, s.h.out, s.w.out, cout}, dy, taps.data(), static_cast<int64_t>(taps.size()), kernel.data(),
                          cin, dz, threads);

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

// Z, the zero-inserted input, is materialised in the workspace.
int64_t conv_transpose2d_zero_insert_backward_weights_workspace(const ConvShape& s) {
  return saturating_product({s.batch, zero_inserted_length(s.h), zero_inserted_length(s.w), s.in_channels});
}

void conv_transpose2d_zero_insert_backward_weights(const ConvShape& s, const float* x, const float* dy, float* dw, float* z,
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

  // dW[k-1-t] = sum_o Z[o + t*dilation]ᵀ · dY[o]: the weight gradient of a stride-1 conv
  // over Z (conv2d_backward_weights: per panel of output pixels, the Z pixels of the
  // taps gathered, inserted zeros included), its taps then flipped.
  if (cout >= 32) {
    ConvShape conv{s.batch, cin, cout, {zh, kh, 1, s.h.dilation, 0, 0, s.h.out}, {zw, kw, 1, s.w.dilation, 0, 0, s.w.out}};
    std::vector<float> corr(static_cast<size_t>(kh * kw * cin * cout));
    conv2d_backward_weights(conv, z, dy, corr.data(), threads);
    for (int64_t t = 0; t < kh * kw; ++t)
      std::copy(corr.data() + t * cin * cout, corr.data() + (t + 1) * cin * cout, dw + (kh * kw - 1 - t) * cin * cout);
    return;
  }
  // Few output channels: the same sum as sum_z Z[z]ᵀ · dY[z - t*dilation], Z read in place
  // over all its pixels and dY gathered for several taps at once (as the split backward
  // reads x), which keeps the GEMM wide; the rows of Z beyond the output's reach add
  // more zero products, a small share for such (last, large) layers.
  std::vector<TapOffset> taps;
  std::vector<float*> slices;
  for (int64_t th = 0; th < kh; ++th)
    for (int64_t tw = 0; tw < kw; ++tw) {  // correlation taps; the kernel tap is flipped
      taps.push_back({-th * s.h.dilation, -tw * s.w.dilation});
      slices.push_back(dw + ((kh - 1 - th) * kw + (kw - 1 - tw)) * cin * cout);
    }
  accumulate_tap_outer_products(TapGrid{s.batch, zh, zw, 1, 1, s.h.out, s.w.out, cout}, z, cin, dy, taps.data(), static_cast<int64_t>(taps.size()),
                                slices.data(), threads);
}

void scatter_conv_transpose2d_full_kernel(const ConvShape& s, const std::vector<AxisPhase>& phases_h, const std::vector<AxisPhase>& phases_w,
                                const float* full, const std::vector<float*>& sub_kernels, int64_t panel_columns) {
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
          repanel_matrices(1, cin, cout, 0, panel_columns, full + tap * cin * cout, sub + (static_cast<int64_t>(th) * tw_n + tw) * cin * cout);
        }
    }
}

}  // namespace edgegan::cpu
