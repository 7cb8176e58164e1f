// The activations over n contiguous floats, built once per x86 family from the same
// functors as the baseline loops (activation_functors.h). apply_activation takes this
// path for Tanh and Sigmoid, whose rational function was most of a fused epilogue's time
// on baseline SSE (ESPCN's 360x640x64 Tanh: 14-18 ms). Within a family the bits are one
// function's, whatever the thread count; across families they differ in the last bits
// (FMA contraction), within the activation tests' tolerance. Internal to kernels_cpu.
#pragma once

#include <cstdint>

#include "kernels_cpu/activation/activation.h"

namespace edgegan::cpu {

using ActivateRunFn = void (*)(float* y, int64_t n, Activation activation, float alpha, float beta);

// The active family's run for `activation`, or nullptr where the baseline loop applies it.
ActivateRunFn wide_activation_run(Activation activation);

#if defined(EDGEGAN_HAVE_X86_KERNELS)
void activate_run__avx512(float* y, int64_t n, Activation activation, float alpha, float beta);
void activate_run__avx2(float* y, int64_t n, Activation activation, float alpha, float beta);
#endif

}  // namespace edgegan::cpu
