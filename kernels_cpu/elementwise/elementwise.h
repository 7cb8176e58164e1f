// An activation that could not be fused into a producer, as its own pass:
// y = act(x) over `count` floats (in place allowed), with the scalar definition
// (activation.h activate). Its gradient is activation_backward.
#pragma once

#include <cstdint>

#include "kernels_cpu/activation/activation.h"

namespace edgegan::cpu {

void elementwise_activation(int64_t count, const float* x, float* y, Activation activation, float alpha, float beta = 0.f);

}  // namespace edgegan::cpu
