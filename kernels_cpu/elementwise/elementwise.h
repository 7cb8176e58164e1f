// An activation that could not be fused into a producer, as its own pass:
// y = act(x) over `count` floats (in place allowed), on `threads` threads. It applies
// the vectorised functors a fused epilogue applies (apply_activation), so an op gives
// the same values whether or not the converter could fuse its activation. Its
// gradient is activation_backward.
#pragma once

#include <cstdint>

#include "kernels_cpu/activation/activation.h"

namespace edgegan::cpu {

void elementwise_activation(int64_t count, const float* x, float* y, Activation activation, float alpha, float beta = 0.f, int threads = 1);

}  // namespace edgegan::cpu
