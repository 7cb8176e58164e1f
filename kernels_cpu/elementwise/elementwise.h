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

// An fp16 session's route: x and y halves (in place allowed), widened per block, the
// same functors in fp32, narrowed (ties to even). Returns whether a finite value became
// infinite (past the half range).
bool elementwise_activation_halves(int64_t count, const uint16_t* x, uint16_t* y, Activation activation, float alpha, float beta, int threads);

}  // namespace edgegan::cpu
