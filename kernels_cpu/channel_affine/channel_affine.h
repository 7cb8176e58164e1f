// Per-channel affine map, a BatchNorm that had no producer to fold into:
// y = act(x * scale[c] + shift[c]) over `pixels` pixels of `channels` (NHWC or rows).
#pragma once

#include <cstdint>

#include "kernels_cpu/activation/activation.h"

namespace edgegan::cpu {

// In place allowed (y == x).
void channel_affine(int64_t pixels, int64_t channels, const float* scale, const float* shift, const float* x, float* y,
                    Activation activation, float alpha, float beta = 0.f);

// An fp16 session's route: x and y halves (in place allowed), widened in blocks of
// pixel rows, the same arithmetic, narrowed (ties to even). Returns whether a finite
// value became infinite (past the half range).
bool channel_affine_halves(int64_t pixels, int64_t channels, const float* scale, const float* shift, const uint16_t* x, uint16_t* y,
                           Activation activation, float alpha, float beta);
// From dy (the activation's gradient already applied): dx += dy * scale[c] (dx may be
// null) and, when dscale/dshift are given, dscale[c] += sum dy * x, dshift[c] += sum dy (all accumulated).
void channel_affine_backward(int64_t pixels, int64_t channels, const float* scale, const float* x, const float* dy, float* dx,
                             float* dscale, float* dshift);

}  // namespace edgegan::cpu
