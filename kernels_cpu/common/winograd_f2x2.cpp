#include "kernels_cpu/common/winograd_f2x2.h"

#include <algorithm>
#include <array>

#include "kernels_cpu/common/simd_clones.h"
#include "kernels_cpu/common/epilogue.h"
#include "kernels_cpu/gemm/gemm.h"

namespace edgegan::cpu {
namespace {

// One window's outputs for one phase: out[2a + b] (nullptr: outside the phase) =
// f((Aᵀ m A)[a][b] + bias) with Aᵀ = [[1,1,0],[0,1,1]]; m[e] is element e's row of
// products (width channels).
template <typename F>
inline void output_transform_with(const float* const* m, int64_t width, float* const* out, const float* bias, F f) {
  const float *__restrict m0 = m[0], *__restrict m1 = m[1], *__restrict m2 = m[2], *__restrict m3 = m[3], *__restrict m4 = m[4];
  const float *__restrict m5 = m[5], *__restrict m6 = m[6], *__restrict m7 = m[7], *__restrict m8 = m[8];
  if (out[0] && out[1] && out[2] && out[3]) {  // an interior window: all four in one pass
    float *__restrict o0 = out[0], *__restrict o1 = out[1], *__restrict o2 = out[2], *__restrict o3 = out[3];
    if (bias) {
      const float* __restrict bs = bias;
EDGEGAN_NO_ALIAS_LOOP
      for (int64_t c = 0; c < width; ++c) {
        const float r0 = m0[c] + m3[c], r1 = m1[c] + m4[c], r2 = m2[c] + m5[c];
        const float s0 = m3[c] + m6[c], s1 = m4[c] + m7[c], s2 = m5[c] + m8[c];
        o0[c] = f((r0 + r1) + bs[c]), o1[c] = f((r1 + r2) + bs[c]), o2[c] = f((s0 + s1) + bs[c]), o3[c] = f((s1 + s2) + bs[c]);
      }
    } else {
EDGEGAN_NO_ALIAS_LOOP
      for (int64_t c = 0; c < width; ++c) {
        const float r0 = m0[c] + m3[c], r1 = m1[c] + m4[c], r2 = m2[c] + m5[c];
        const float s0 = m3[c] + m6[c], s1 = m4[c] + m7[c], s2 = m5[c] + m8[c];
        o0[c] = f((r0 + r1) + 0.f), o1[c] = f((r1 + r2) + 0.f), o2[c] = f((s0 + s1) + 0.f), o3[c] = f((s1 + s2) + 0.f);
      }
    }
    return;
  }
  // A border window: the outputs inside the phase, each the same sums as above.
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b) {
      float* __restrict o = out[2 * a + b];
      if (!o) continue;
      const float *__restrict t0 = m[3 * a + b], *__restrict t1 = m[3 * a + b + 1];
      const float *__restrict u0 = m[3 * (a + 1) + b], *__restrict u1 = m[3 * (a + 1) + b + 1];
EDGEGAN_NO_ALIAS_LOOP
      for (int64_t c = 0; c < width; ++c) o[c] = f(((t0[c] + u0[c]) + (t1[c] + u1[c])) + (bias ? bias[c] : 0.f));
    }
}

}  // namespace

// v[e][c] (e = 3a + b, e_stride floats apart) = (Bᵀ d B)[a][b] for the window
// d[3r + col] (row r along h), per channel: Bᵀ = [[1,-1,0],[0,1,0],[0,-1,1]].
EDGEGAN_SIMD_CLONES void f2x2_input_transform(const float* const* d, int64_t cin, float* v, int64_t e_stride) {
  const float *__restrict d00 = d[0], *__restrict d01 = d[1], *__restrict d02 = d[2];
  const float *__restrict d10 = d[3], *__restrict d11 = d[4], *__restrict d12 = d[5];
  const float *__restrict d20 = d[6], *__restrict d21 = d[7], *__restrict d22 = d[8];
  float *__restrict v0 = v, *__restrict v1 = v + e_stride, *__restrict v2 = v + 2 * e_stride;
  float *__restrict v3 = v + 3 * e_stride, *__restrict v4 = v + 4 * e_stride, *__restrict v5 = v + 5 * e_stride;
  float *__restrict v6 = v + 6 * e_stride, *__restrict v7 = v + 7 * e_stride, *__restrict v8 = v + 8 * e_stride;
EDGEGAN_NO_ALIAS_LOOP
  for (int64_t c = 0; c < cin; ++c) {
    const float r00 = d00[c] - d10[c], r01 = d01[c] - d11[c], r02 = d02[c] - d12[c];  // row 0 - row 1
    const float r10 = d10[c], r11 = d11[c], r12 = d12[c];
    const float r20 = d20[c] - d10[c], r21 = d21[c] - d11[c], r22 = d22[c] - d12[c];  // row 2 - row 1
    v0[c] = r00 - r01, v1[c] = r01, v2[c] = r02 - r01;
    v3[c] = r10 - r11, v4[c] = r11, v5[c] = r12 - r11;
    v6[c] = r20 - r21, v7[c] = r21, v8[c] = r22 - r21;
  }
}

namespace {
// The same for the activations the AVX-512 clone can inline (kNone, kRelu, kLeakyRelu);
// returns false for the others, stored without activation for f2x2_output_transform to
// activate.
EDGEGAN_SIMD_CLONES bool output_transform_inlined(const float* const* m, int64_t width, float* const* out, const float* bias, Activation activation,
                                                  float alpha) {
  switch (activation) {
    case Activation::kNone: output_transform_with(m, width, out, bias, [](float v) { return v; }); return true;
    case Activation::kRelu: output_transform_with(m, width, out, bias, [](float v) { return v > 0.f ? v : 0.f; }); return true;
    case Activation::kLeakyRelu:
      output_transform_with(m, width, out, bias, [alpha](float v) { return v > 0.f ? v : v * alpha; });
      return true;
    default: break;
  }
  output_transform_with(m, width, out, bias, [](float v) { return v; });
  return false;
}
}  // namespace

void f2x2_output_transform(const float* const* m, int64_t width, float* const* out, const float* const* residual, const Epilogue& ep,
                           int64_t column) {
  const bool activated = output_transform_inlined(m, width, out, ep.bias ? ep.bias + column : nullptr, ep.activation, ep.alpha);
  for (int q = 0; q < 4; ++q) {
    if (!out[q]) continue;
    if (!activated) apply_activation(out[q], 1, width, width, ep.activation, ep.alpha, ep.beta, ep.slope ? ep.slope + column : nullptr);
    if (residual && residual[q]) add_residual(out[q], 1, width, width, residual[q]);
  }
}

// The same sums in the same order as pack_conv_transpose2d_winograd_weights, so both
// give the same floats.
EDGEGAN_SIMD_CLONES void f2x2_filter_transform(const float* const* g, int64_t g_stride, float* const* u, int64_t u_stride, int64_t rows,
                                               int64_t n) {
  for (int64_t r = 0; r < rows; ++r) {
    const float *__restrict a00 = g[0] + r * g_stride, *__restrict a01 = g[1] + r * g_stride;
    const float *__restrict a10 = g[2] + r * g_stride, *__restrict a11 = g[3] + r * g_stride;
    float *__restrict u0 = u[0] + r * u_stride, *__restrict u1 = u[1] + r * u_stride, *__restrict u2 = u[2] + r * u_stride;
    float *__restrict u3 = u[3] + r * u_stride, *__restrict u4 = u[4] + r * u_stride, *__restrict u5 = u[5] + r * u_stride;
    float *__restrict u6 = u[6] + r * u_stride, *__restrict u7 = u[7] + r * u_stride, *__restrict u8 = u[8] + r * u_stride;
EDGEGAN_NO_ALIAS_LOOP
    for (int64_t c = 0; c < n; ++c) {
      const float h00 = a00[c], h01 = a01[c], h10 = a10[c], h11 = a11[c];
      const float g10 = h00 + h10, g11 = h01 + h11;
      u0[c] = h00, u1[c] = h00 + h01, u2[c] = h01;
      u3[c] = g10, u4[c] = g10 + g11, u5[c] = g11;
      u6[c] = h10, u7[c] = h10 + h11, u8[c] = h11;
    }
  }
}

void f2x2_slice_products(const float* v, int64_t e_stride, int64_t depth, int64_t c0, int64_t chunk, const float* slice, int64_t width,
                         const float* zeros, float* m) {
  constexpr int64_t kRows = 16;  // two rows of the 8-row micro-kernel per call
  constexpr int64_t kPanels = kF2x2SliceBlock / kF2x2SlicePanel;
  std::array<const float*, kRows> a_rows, zero_rows;
  std::array<float*, kRows> c_rows;
  zero_rows.fill(zeros);
  // One slice panel at a time, for all the chunk's windows: it stays in L2 meanwhile.
  for (int64_t e = 0; e < kF2x2Elements; ++e)
    for (int64_t p = 0; p * kF2x2SlicePanel < width; ++p) {
      const int64_t n = std::min(kF2x2SlicePanel, width - p * kF2x2SlicePanel);
      const float* b = slice + (e * kPanels + p) * depth * kF2x2SlicePanel;
      for (int64_t g0 = 0; g0 < chunk; g0 += kRows) {
        const int64_t count = std::min(kRows, chunk - g0);
        for (int64_t i = 0; i < count; ++i) {
          a_rows[static_cast<size_t>(i)] = v + e * e_stride + (c0 + g0 + i) * depth;
          c_rows[static_cast<size_t>(i)] = m + (e * chunk + g0 + i) * width + p * kF2x2SlicePanel;
        }
        gemm_store_rows(count, n, depth, a_rows.data(), b, kF2x2SlicePanel, zero_rows.data(), c_rows.data(), Epilogue{});
      }
    }
}

}  // namespace edgegan::cpu
