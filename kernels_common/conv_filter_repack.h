// Filters repacked for NHWC convolution libraries (cuDNN): [Cout][kh][kw][Cin] ("KRSC"),
// each channel count rounded up to a multiple (8 for the fp16 tensor-core engines), the
// padding zeros. Made once when a session is created. With the activations' extra
// channels zero as well, every added product is an exact zero, so the padded
// convolution's real outputs equal the unpadded ones.
#pragma once

#include <cstdint>

#include "kernels_common/conv_transpose2d_phases.h"

namespace edgegan::kernels {

// `channels` rounded up to a multiple of `multiple` (>= 1).
int64_t padded_channel_count(int64_t channels, int64_t multiple);

// The source filter: taps_h x taps_w taps, each a Cin x Cout matrix in `layout`
// (PanelLayout(Cin, Cout, 0) is a Conv2D's plain [kh][kw][Cin][Cout]; a transposed
// convolution's stored sub-kernel has the file's panels). Exactly one of f32 / f16 is
// set. A tap's matrix is layout.rows * layout.cols values, one after the other.
struct FilterSource {
  const float* f32 = nullptr;
  const uint16_t* f16 = nullptr;  // IEEE halves
  int64_t taps_h = 1, taps_w = 1;
  PanelLayout layout{0, 0, 0};
  // Tap (r, s) of the output reads stored tap (taps_h-1-r, taps_w-1-s): a transposed
  // convolution's phase sub-kernel run as a forward correlation (PhaseConv).
  bool flip_taps = false;
};

// Writes cout_padded * taps_h * taps_w * cin_padded values to `out` (floats or halves,
// rounded to nearest even): out[k][r][s][c] = w[r][s][c][k] inside (w[taps_h-1-r]
// [taps_w-1-s][c][k] with flip_taps), 0 in the padding.
void repack_filter_krsc(const FilterSource& w, int64_t cin_padded, int64_t cout_padded, float* out);
void repack_filter_krsc(const FilterSource& w, int64_t cin_padded, int64_t cout_padded, uint16_t* out);

}  // namespace edgegan::kernels
