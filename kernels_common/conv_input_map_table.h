// The index tables through which a convolution reads a nearest upsampling and a
// reflect, edge or wrap pad of its input in place (kernels_cpu/common/conv_input_map.h
// says how the CPU kernels read them); both backends build them on the host.
#pragma once

#include <cstdint>

#include "kernels_common/pad_shape.h"

namespace edgegan::kernels {

// One axis of a fused input map: the input upsampled by `factor` (nearest: index o
// reads o / factor), then padded in the map's PadMode (kReflect, kEdge or kWrap; with
// kConstant both pads must be 0).
struct InputMapAxis {
  int64_t factor = 1, pad_begin = 0, pad_end = 0;
  int64_t length(int64_t input) const { return input * factor + pad_begin + pad_end; }
};
// table[o] for o < axis.length(input): the input index logical index o reads.
void conv_input_map_table(int64_t input, const InputMapAxis& axis, PadMode mode, int32_t* table);

}  // namespace edgegan::kernels

// The CPU kernels name these unqualified, and callers as cpu::; one definition.
namespace edgegan::cpu {
using namespace kernels;
}  // namespace edgegan::cpu
