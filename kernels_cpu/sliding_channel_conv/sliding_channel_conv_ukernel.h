// The sliding-channel convolution's inner loops, compiled once per ISA (plain loops the
// compiler vectorises over a tile's 16 pixels or along a window):
// sliding_channel_conv_ukernel.inc is included by sliding_channel_conv.cpp (baseline)
// and by the __avx2 / __avx512 files, each into its own anonymous namespace, so no
// inline code is shared between files built with different flags.
#pragma once

#include <cstdint>

#include "kernels_cpu/common/cpu_isa.h"

namespace edgegan::cpu {

constexpr int64_t kSlidingChannelTile = 16;       // pixels per forward tile
constexpr int64_t kSlidingChannelInputTile = 32;  // pixels per dX tile
constexpr int kSlidingChannelWeightPixels = 32;   // pixels per dW call
constexpr int kSlidingChannelInputGroup = 8;      // dX tiles sharing one pass over the cover lists

struct SlidingChannelUkernels {
  // Outputs [o0, o1) of one tile: yb[t * cout + o] = bias[o] + sum_{tap, j} w[o][tap][j] * xt[tap][start(o) + j][t], t < count.
  // xt: [taps][rows][16] (rows >= Cin + gw - 1); packed: [Cout][taps][gw].
  void (*forward_tile)(const float* xt, int64_t rows, const int32_t* starts, int64_t period, const float* packed, int64_t taps,
                       int64_t gw, int64_t o0, int64_t o1, const float* bias, float* yb, int64_t cout, int64_t count);
  // dX of `tiles` input tiles (gt + b * tile_stride: tile b's [taps][Cout][32] dY): xb[b][t * cin + c] = sum over the
  // (o, j) covering c and the taps of w[o][tap][j] * gt_b[tap][o][t], t < counts[b].
  void (*input_tiles)(const float* gt, int64_t tile_stride, int tiles, int64_t cout, int64_t cin, const int32_t* cover_offsets,
                      const int32_t* cover_p, const int32_t* cover_j, int64_t period, const float* packed, int64_t taps, int64_t gw,
                      float* const* xb, const int64_t* counts);
  // dW of outputs [o0, o1) (window starts block_starts[o - o0]) and one tap from npix pixels in order:
  // dw[o][tap][j] += g[p][o] * x[p * x_stride + start(o) + j], x's rows extended past Cin (x[p][Cin + i] = x[p][i]).
  void (*weights_chunk)(const float* const* g, const float* x, int64_t x_stride, int npix, const int32_t* block_starts, int64_t gw,
                        int64_t o0, int64_t o1, int64_t tap, int64_t taps, float* dw);
};

const SlidingChannelUkernels& sliding_channel_ukernels(Isa isa);
const SlidingChannelUkernels& sliding_channel_ukernels();  // active_isa()'s

#if defined(EDGEGAN_HAVE_X86_KERNELS)
extern const SlidingChannelUkernels kSlidingChannelAvx2, kSlidingChannelAvx512;
#endif

}  // namespace edgegan::cpu
