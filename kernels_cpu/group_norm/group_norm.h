// Group normalisation of an NHWC map: per sample and per group of channels/groups
// consecutive channels, the mean and (biased) variance over the group's pixels and
// channels, then y = act((x - mean) / sqrt(var + epsilon) * scale[c] + shift[c]) (+ residual,
// a tensor of x's layout, when given: a residual/skip Add fused into the apply pass).
// Instance normalisation is groups == channels; layer normalisation over C,H,W is groups == 1.
#pragma once

#include <cstdint>

#include "kernels_cpu/activation/activation.h"

namespace edgegan::cpu {

struct GroupNormShape {
  int64_t batch = 1;
  int64_t pixels = 1;    // H * W
  int64_t channels = 1;  // C, a multiple of groups
  int64_t groups = 1;
};

// Plain loops, statistics in double (two passes): the definition.
void group_norm_reference(const GroupNormShape& s, const float* x, const float* scale, const float* shift, float epsilon, float* y,
                          Activation activation, float alpha, float beta = 0.f, const float* residual = nullptr);

// Scratch of the fast forward, in floats (64-byte multiples of doubles and floats).
int64_t group_norm_workspace(const GroupNormShape& s);
// The fast forward: statistics in one pass over x (per-channel sums of the values and
// their squares, shifted by the sample's first pixel, in double, over fixed blocks of
// pixels, combined per group alike whatever the thread count: bit-identical results),
// then the normalisation (x - mean with the mean as a high and a low float, so a mean far
// beyond the spread costs no accuracy), affine map and activation vectorised over
// channels, then the residual added (nullptr: none). Parallel over samples × pixel
// blocks. y == x (in place) is allowed; with activation None so is y == residual (each
// element read before it is written).
// workspace: group_norm_workspace(s) floats, or nullptr (then it allocates).
void group_norm(const GroupNormShape& s, const float* x, const float* scale, const float* shift, float epsilon, float* y,
                Activation activation, float alpha, float beta, float* workspace, int threads, const float* residual = nullptr);

int64_t group_norm_backward_workspace(const GroupNormShape& s);
// From dy, the gradient at the affine map's output (the activation's gradient already
// applied) and the forward's input x: dx (written, or added to when accumulate_dx; may
// be null), dscale and dshift (added to; both null or both given). Deterministic: fixed
// blocks, fixed reduction order, whatever the thread count.
void group_norm_backward(const GroupNormShape& s, const float* x, const float* scale, float epsilon, const float* dy, float* dx,
                         bool accumulate_dx, float* dscale, float* dshift, float* workspace, int threads);

}  // namespace edgegan::cpu
