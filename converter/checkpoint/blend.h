// Weight blending of two checkpoints of one architecture (Real-ESRGAN's denoise
// strength): every tensor becomes (1 - t)·a + t·b.
#pragma once

#include <string>

#include "converter/checkpoint/state_dict.h"

namespace edgegan::converter::checkpoint {

// t in [0, 1]; t = 0 leaves `a` as it was and t = 1 gives `b`'s values exactly. Throws
// ConvertError naming the first tensor (in a's order) that b lacks or holds in another
// shape, or the first tensor only b has.
void blend_into(StateDict& a, const StateDict& b, float t, const std::string& a_name, const std::string& b_name);

}  // namespace edgegan::converter::checkpoint
