// The sliding-channel convolution's inner loops, compiled once per ISA (plain loops the
// compiler vectorises over a tile's 16 pixels or along a window):
// sliding_channel_conv_ukernel.inc is included by sliding_channel_conv.cpp (baseline)
// and by the __avx2 / __avx512 files, each into its own anonymous namespace, so no
// inline code is shared between files built with different flags.
#pragma once

#include <cstdint>

#include "kernels_cpu/common/cpu_isa.h"

namespace edgegan::cpu {

constexpr int64_t kSlidingChannelTile = 16;  // pixels per tile

struct SlidingChannelUkernels {
  // Outputs [o0, o1) of one tile: yb[t * cout + o] = bias[o] + sum_{tap, j} w[o][tap][j] * xt[tap][start(o) + j][t], t < count.
  // xt: [taps][rows][16] (rows >= Cin + gw - 1); packed: [Cout][taps][gw].
  void (*forward_tile)(const float* xt, int64_t rows, const int32_t* starts, int64_t period, const float* packed, int64_t taps,
                       int64_t gw, int64_t o0, int64_t o1, const float* bias, float* yb, int64_t cout, int64_t count);
  // dX of one input tile: xb[t * cin + c] = sum over the (o, j) covering c and taps of w[o][tap][j] * gt[tap][o][t].
  void (*input_tile)(const float* gt, int64_t cout, int64_t cin, const int32_t* cover_offsets, const int32_t* cover_p,
                     const int32_t* cover_j, int64_t period, const float* packed, int64_t taps, int64_t gw, float* xb, int64_t count);
  // One pixel's dW for outputs [o0, o1) and one tap: dw[o][tap][j] += g[o] * xp[(start(o) + j) mod cin].
  void (*weights_pixel)(const float* g, const float* xp, int64_t cin, const int32_t* starts, int64_t period, int64_t gw, int64_t o0,
                        int64_t o1, int64_t tap, int64_t taps, float* dw);
};

const SlidingChannelUkernels& sliding_channel_ukernels(Isa isa);
const SlidingChannelUkernels& sliding_channel_ukernels();  // active_isa()'s

#if defined(EDGEGAN_HAVE_X86_KERNELS)
extern const SlidingChannelUkernels kSlidingChannelAvx2, kSlidingChannelAvx512;
#endif

}  // namespace edgegan::cpu
