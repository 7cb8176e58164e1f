#include "kernels_common/conv_input_map_table.h"

namespace edgegan::kernels {

void conv_input_map_table(int64_t input, const InputMapAxis& a, PadMode mode, int32_t* table) {
  const PadAxis padded{input * a.factor, a.pad_begin, a.pad_end};
  for (int64_t o = 0; o < a.length(input); ++o) table[o] = static_cast<int32_t>(pad_source(padded, mode, o) / a.factor);
}

}  // namespace edgegan::kernels
