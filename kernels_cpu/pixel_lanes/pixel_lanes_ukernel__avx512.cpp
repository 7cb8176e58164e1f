// AVX-512 pixel-lanes family (pixel_lanes_ukernel.h): 16 output pixels per
// zmm, all four phases of a stride-2x2 head in registers at once (4 phases x Cout
// x blocks <= 24 accumulators), and the 16x16 transpose that turns NHWC input
// pixels into the channel planes it reads. Compiled with -mavx512f -mfma; shares
// nothing inline with other files.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <bit>

#include "kernels_cpu/pixel_lanes/pixel_lanes_ukernel.h"

namespace edgegan::cpu {
namespace {

constexpr int pairs(unsigned h0, unsigned h1, unsigned w0, unsigned w1) {
  return (std::popcount(h0) + std::popcount(h1)) * (std::popcount(w0) + std::popcount(w1));
}

// C output channels, P blocks of 16 positions, the phases' tap masks along h and w.
// Everything the loop indexes is a compile-time constant once unrolled, so the
// accumulators stay in registers and each weight is an FMA's broadcast operand at a
// fixed displacement.
template <int C, int P, unsigned H0, unsigned H1, unsigned W0, unsigned W1>
void accumulate(const PixelLanesArgs& g) {
  constexpr unsigned kH[2] = {H0, H1}, kW[2] = {W0, W1};
  constexpr int kSlots = pairs(H0, H1, W0, W1) * C;
  // acc[((a * 2 + b) * C + co) * P + p]: the layout of g.acc, one vector per entry.
  constexpr int kAcc = 4 * C * P;
  __m512 acc[kAcc];
#pragma GCC unroll 24
  for (int i = 0; i < kAcc; ++i) acc[i] = _mm512_setzero_ps();

  const int64_t ps = g.plane_stride;
  const float* w = g.weights;
  for (int64_t ci = 0; ci < g.cin; ++ci, w += kSlots) {
    int slot = 0;
#pragma GCC unroll 3
    for (int r = 0; r < kPixelLanesMaxSpan; ++r) {
      if ((((H0 | H1) >> r) & 1) == 0) continue;
#pragma GCC unroll 3
      for (int c = 0; c < kPixelLanesMaxSpan; ++c) {
        if ((((W0 | W1) >> c) & 1) == 0) continue;
        __m512 x[P];
#pragma GCC unroll 2
        for (int p = 0; p < P; ++p) x[p] = _mm512_loadu_ps(g.rows[p][r] + ci * ps - c);
#pragma GCC unroll 2
        for (int a = 0; a < 2; ++a) {
          if (((kH[a] >> r) & 1) == 0) continue;
#pragma GCC unroll 2
          for (int b = 0; b < 2; ++b) {
            if (((kW[b] >> c) & 1) == 0) continue;
#pragma GCC unroll 3
            for (int co = 0; co < C; ++co) {
              const __m512 wv = _mm512_set1_ps(w[slot++]);
#pragma GCC unroll 2
              for (int p = 0; p < P; ++p) {
                __m512& sum = acc[((a * 2 + b) * C + co) * P + p];
                sum = _mm512_fmadd_ps(x[p], wv, sum);
              }
            }
          }
        }
      }
    }
  }

#pragma GCC unroll 24
  for (int i = 0; i < kAcc; ++i) _mm512_storeu_ps(g.acc + i * 16, acc[i]);
}

using AccumulateFn = void (*)(const PixelLanesArgs&);

// [channels - 1][blocks - 1] for one axis pattern (the same on both axes).
template <unsigned M0, unsigned M1>
constexpr std::array<std::array<AccumulateFn, kPixelLanesMaxBlocks>, kPixelLanesMaxChannels> family() {
  return {{{accumulate<1, 1, M0, M1, M0, M1>, accumulate<1, 2, M0, M1, M0, M1>},
           {accumulate<2, 1, M0, M1, M0, M1>, accumulate<2, 2, M0, M1, M0, M1>},
           {accumulate<3, 1, M0, M1, M0, M1>, accumulate<3, 2, M0, M1, M0, M1>}}};
}

template <int I>
constexpr auto family_of_pattern() {
  return family<kPixelLanesAxisPatterns[I].phase0, kPixelLanesAxisPatterns[I].phase1>();
}
constexpr std::array kFamilies = {family_of_pattern<0>(), family_of_pattern<1>(), family_of_pattern<2>()};
static_assert(kFamilies.size() == std::size(kPixelLanesAxisPatterns));

// 16x16 transpose in registers: 4x4 transposes inside each 128-bit lane
// (unpack, shuffle), then two rounds of 128-bit lane shuffles.
inline void transpose16(__m512 r[16]) {
  __m512 t[16], u[16];
#pragma GCC unroll 8
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
#pragma GCC unroll 4
  for (int g = 0; g < 16; g += 4) {  // u[g + j] = column j of rows g..g+3, in each 128-bit lane
    u[g + 0] = _mm512_shuffle_ps(t[g], t[g + 2], 0x44);
    u[g + 1] = _mm512_shuffle_ps(t[g], t[g + 2], 0xEE);
    u[g + 2] = _mm512_shuffle_ps(t[g + 1], t[g + 3], 0x44);
    u[g + 3] = _mm512_shuffle_ps(t[g + 1], t[g + 3], 0xEE);
  }
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {  // lanes 0, 2 / 1, 3 of row groups (0, 1) and (2, 3)
    t[j] = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x88);
    t[4 + j] = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xDD);
    t[8 + j] = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x88);
    t[12 + j] = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xDD);
  }
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    r[j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0x88);
    r[8 + j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0xDD);
    r[4 + j] = _mm512_shuffle_f32x4(t[4 + j], t[12 + j], 0x88);
    r[12 + j] = _mm512_shuffle_f32x4(t[4 + j], t[12 + j], 0xDD);
  }
}

// Permutation tables for interleave_phases_16__avx512.
struct IndexTable {
  alignas(64) int32_t v[16];
};
// Two vectors of 16 alternating: a[0] b[0] a[1] b[1] ... from lane `first` on.
constexpr IndexTable alternate(int first) {
  IndexTable t{};
  for (int i = 0; i < 16; ++i) t.v[i] = (i % 2 ? 16 : 0) + first + i / 2;
  return t;
}
constexpr IndexTable kAlternateLo = alternate(0), kAlternateHi = alternate(8);
// Three channels' pixel vectors into pixel-major floats, output vector k (of 3 per 16
// pixels): channels 0 and 1 by one two-source permute, channel 2 blended in by a masked one.
constexpr IndexTable rgb_channels01(int k) {
  IndexTable t{};
  for (int i = 0; i < 16; ++i) {
    const int f = 16 * k + i, pixel = f / 3, co = f % 3;
    t.v[i] = co == 1 ? 16 + pixel : pixel;  // channel 2 lanes are replaced below
  }
  return t;
}
constexpr IndexTable rgb_channel2(int k) {
  IndexTable t{};
  for (int i = 0; i < 16; ++i) t.v[i] = (16 * k + i) / 3;
  return t;
}
constexpr __mmask16 rgb_channel2_mask(int k) {
  unsigned m = 0;
  for (int i = 0; i < 16; ++i) m |= ((16 * k + i) % 3 == 2 ? 1u : 0u) << i;
  return static_cast<__mmask16>(m);
}
constexpr IndexTable kRgb01[3] = {rgb_channels01(0), rgb_channels01(1), rgb_channels01(2)};
constexpr IndexTable kRgb2[3] = {rgb_channel2(0), rgb_channel2(1), rgb_channel2(2)};
constexpr __mmask16 kRgb2Mask[3] = {rgb_channel2_mask(0), rgb_channel2_mask(1), rgb_channel2_mask(2)};

inline __m512i load_index(const IndexTable& t) { return _mm512_load_si512(t.v); }

}  // namespace

void interleave_phases_16__avx512(const float* first, const float* second, int64_t channel_stride, int cout, const float* bias,
                                  float* out) {
  // Per channel, the 32 pixels in output order: lo = pixels 0..15, hi = 16..31.
  __m512 lo[kPixelLanesMaxChannels], hi[kPixelLanesMaxChannels];
  const __m512i alt_lo = load_index(kAlternateLo), alt_hi = load_index(kAlternateHi);
  for (int co = 0; co < cout; ++co) {
    __m512 f = _mm512_loadu_ps(first + co * channel_stride), s = _mm512_loadu_ps(second + co * channel_stride);
    if (bias) {
      const __m512 b = _mm512_set1_ps(bias[co]);
      f = _mm512_add_ps(f, b), s = _mm512_add_ps(s, b);
    }
    lo[co] = _mm512_permutex2var_ps(f, alt_lo, s);
    hi[co] = _mm512_permutex2var_ps(f, alt_hi, s);
  }
  switch (cout) {
    case 1:
      _mm512_storeu_ps(out, lo[0]);
      _mm512_storeu_ps(out + 16, hi[0]);
      break;
    case 2:  // pixel-major pairs: the same alternation, of channel 0 with channel 1
      _mm512_storeu_ps(out, _mm512_permutex2var_ps(lo[0], alt_lo, lo[1]));
      _mm512_storeu_ps(out + 16, _mm512_permutex2var_ps(lo[0], alt_hi, lo[1]));
      _mm512_storeu_ps(out + 32, _mm512_permutex2var_ps(hi[0], alt_lo, hi[1]));
      _mm512_storeu_ps(out + 48, _mm512_permutex2var_ps(hi[0], alt_hi, hi[1]));
      break;
    default:  // 3: 16 pixels make 3 output vectors
      for (int half = 0; half < 2; ++half) {
        const __m512* v = half ? hi : lo;
#pragma GCC unroll 3
        for (int k = 0; k < 3; ++k) {
          const __m512 c01 = _mm512_permutex2var_ps(v[0], load_index(kRgb01[k]), v[1]);
          _mm512_storeu_ps(out + 48 * half + 16 * k, _mm512_mask_permutexvar_ps(c01, kRgb2Mask[k], load_index(kRgb2[k]), v[2]));
        }
      }
      break;
  }
}

void pixel_lanes_ukernel_4phase__avx512(const PixelLanesPlan& plan, const PixelLanesArgs& args) {
  kFamilies[static_cast<size_t>(plan.pattern)][static_cast<size_t>(plan.cout - 1)][static_cast<size_t>(args.blocks - 1)](args);
}

void planes_from_pixels_16x16__avx512(const float* src, int64_t pixels, int64_t channels, float* dst, int64_t plane_stride,
                                      int64_t row_floats) {
  const int64_t full = std::min(pixels, row_floats) / 16 * 16;
  for (int64_t c0 = 0; c0 < channels; c0 += 16) {
    const int64_t nc = std::min<int64_t>(16, channels - c0);
    const __mmask16 m = static_cast<__mmask16>((1u << nc) - 1);
    float* d = dst + c0 * plane_stride;
    __m512 r[16];
    for (int64_t p0 = 0; p0 < row_floats; p0 += 16) {
      if (p0 < full) {  // 16 pixels: no per-row test
        const float* s = src + p0 * channels + c0;
#pragma GCC unroll 16
        for (int i = 0; i < 16; ++i) r[i] = _mm512_maskz_loadu_ps(m, s + i * channels);
        transpose16(r);
      } else if (p0 < pixels) {  // the last few pixels, zeros after them
#pragma GCC unroll 16
        for (int i = 0; i < 16; ++i) r[i] = p0 + i < pixels ? _mm512_maskz_loadu_ps(m, src + (p0 + i) * channels + c0) : _mm512_setzero_ps();
        transpose16(r);
      } else {  // padding
#pragma GCC unroll 16
        for (int i = 0; i < 16; ++i) r[i] = _mm512_setzero_ps();
      }
#pragma GCC unroll 16
      for (int j = 0; j < 16; ++j)
        if (j < nc) _mm512_storeu_ps(d + j * plane_stride + p0, r[j]);
    }
  }
}

}  // namespace edgegan::cpu
