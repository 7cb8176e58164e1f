// Concatenation along one axis of row-major tensors: `outer` = product of dims
// before the axis; each input contributes a contiguous chunk of `chunks[i]` floats
// per outer index (its axis length × the product of dims after the axis).
#pragma once

#include <cstdint>
#include <vector>

namespace edgegan::cpu {

void concat(int64_t outer, const std::vector<const float*>& inputs, const std::vector<int64_t>& chunks, float* y);

// Scatters dy's chunks back to each input's gradient (overwritten; null entries are skipped).
void concat_backward(int64_t outer, const float* dy, int inputs, const int64_t* chunks, float* const* dinputs);

}  // namespace edgegan::cpu
