#include "kernels_cpu/concat/concat.h"

#include <algorithm>

namespace edgegan::cpu {

void concat(int64_t outer, const std::vector<const float*>& inputs, const std::vector<int64_t>& chunks,
            float* y) {
  for (int64_t o = 0; o < outer; ++o)
    for (size_t i = 0; i < inputs.size(); ++i) {
      const float* src = inputs[i] + o * chunks[i];
      y = std::copy(src, src + chunks[i], y);
    }
}

void concat_backward(int64_t outer, const float* dy, int inputs, const int64_t* chunks, float* const* dinputs) {
  for (int64_t o = 0; o < outer; ++o)
    for (int i = 0; i < inputs; ++i) {
      if (dinputs[i]) std::copy(dy, dy + chunks[i], dinputs[i] + o * chunks[i]);
      dy += chunks[i];
    }
}

}  // namespace edgegan::cpu
