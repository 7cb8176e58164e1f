// A split transposed convolution as forward convolutions, one per phase, for a library
// that runs correlations (cuDNN): phase (ph, pw) reads a window of the input with zero
// pads around it through its stored sub-kernel with the taps flipped, and writes its
// outputs to every stride-th row and column of the full output, starting at out_begin.
//
// Per axis (conv_transpose2d_phases.h): output q of the phase reads input q - offset(j)
// through stored tap j, offsets ascending by one. With T taps and conv tap t = T-1-j,
// input = q' + t + base, base = q_begin - offset(0) - (T-1) for the phase's q' = q - q_begin:
// a stride-1 correlation over the rows from base on, those before 0 or past the input
// being the pads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels_common/conv_transpose2d_phases.h"

namespace edgegan::kernels {

struct PhaseConvAxis {
  int64_t in_begin = 0, in_length = 0;    // the input rows read: [in_begin, in_begin + in_length)
  int64_t pad_before = 0, pad_after = 0;  // zero rows around them (>= 0)
  int64_t taps = 0;                       // the sub-kernel's taps on this axis
  int64_t out_begin = 0, out_count = 0;   // the first output position it writes, and how many (stride apart)
};

struct PhaseConv {
  int64_t phase_h = 0, phase_w = 0;  // index into the stored sub-kernels: phase_h * stride_w + phase_w
  PhaseConvAxis h, w;
};

// The phases with outputs, each as a forward convolution. Returns false, with `why`,
// for a layer this form cannot express: a phase with outputs but no taps (its outputs
// are the bias alone), taps whose input offsets are not consecutive (a dilation sharing
// a factor with the stride), or a phase whose every tap reads outside the input.
bool conv_transpose2d_phase_convs(const ConvShape& shape, std::vector<PhaseConv>& convs, std::string* why);

}  // namespace edgegan::kernels
