#include <algorithm>

#include "kernels_cpu/conv_transpose2d/conv_transpose2d_zero_insert.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"
#include "kernels_cpu/gemm/gemm.h"
#include "kernels_cpu/activation/activation.h"
#include "kernels_common/conv_geometry.h"

namespace edgegan::cpu {

// The zero-inserted input Z has length out + dilation*(kernel-1) per axis; input
// pixel i sits at z = i*stride - pad_begin + dilation*(kernel-1), everything else
// is 0. Then y[o] = sum_t Z[o + t*dilation] · W[kernel-1-t] (stride-1 valid conv).
namespace {
int64_t zero_inserted_length(const ConvAxis& a) { return a.out + a.dilation * (a.kernel - 1); }
}  // namespace

int64_t conv_transpose2d_zero_insert_workspace(const ConvShape& s) {
  return saturating_product({s.batch, zero_inserted_length(s.h), zero_inserted_length(s.w), s.in_channels});
}

void conv_transpose2d_zero_insert(const ConvShape& s, const float* full_kernel, const float* x,
                                  float* y, float* z, const Epilogue& ep, int threads) {
  const int64_t cin = s.in_channels, cout = s.out_channels;
  const int64_t zh = zero_inserted_length(s.h), zw = zero_inserted_length(s.w);
  std::fill(z, z + s.batch * zh * zw * cin, 0.f);
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t ih = 0; ih < s.h.in; ++ih) {
      const int64_t r = ih * s.h.stride - s.h.pad_begin + s.h.dilation * (s.h.kernel - 1);
      if (r < 0 || r >= zh) continue;
      for (int64_t iw = 0; iw < s.w.in; ++iw) {
        const int64_t c = iw * s.w.stride - s.w.pad_begin + s.w.dilation * (s.w.kernel - 1);
        if (c < 0 || c >= zw) continue;
        const float* src = x + ((n * s.h.in + ih) * s.w.in + iw) * cin;
        std::copy(src, src + cin, z + ((n * zh + r) * zw + c) * cin);
      }
    }

  const int64_t tasks = s.batch * s.h.out;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
  for (int64_t task = 0; task < tasks; ++task) {
    const int64_t n = task / s.h.out, oh = task % s.h.out;
    float* yrow = y + (n * s.h.out + oh) * s.w.out * cout;
    fill_bias(yrow, s.w.out, cout, cout, ep.bias);
    for (int64_t t_h = 0; t_h < s.h.kernel; ++t_h) {
      const int64_t r = oh + t_h * s.h.dilation;
      const int64_t kh = s.h.kernel - 1 - t_h;
      for (int64_t t_w = 0; t_w < s.w.kernel; ++t_w) {
        const int64_t kw = s.w.kernel - 1 - t_w;
        const float* a = z + ((n * zh + r) * zw + t_w * s.w.dilation) * cin;
        const float* b = full_kernel + (kh * s.w.kernel + kw) * cin * cout;
        gemm_accumulate(s.w.out, cout, cin, a, cin, b, cout, yrow, cout);
      }
    }
    apply_activation(yrow, s.w.out, cout, cout, ep.activation, ep.alpha, ep.beta, ep.slope);
  }
}

}  // namespace edgegan::cpu
