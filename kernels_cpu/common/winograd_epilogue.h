// The end the 3x3 Winograd output transforms share (F(4x4, 3x3) in conv2d_winograd,
// F(6x6, 3x3) in conv2d_winograd_f6): each output pixel of a block gets bias and
// activation as it is stored, then the residual's pixel added. kNone, kRelu,
// kLeakyRelu, kTanh and kSigmoid are inlined into the transform's loops (tanh as the
// branch-free rational function apply_activation uses, so it vectorises with them); a
// per-channel PRelu runs over each stored pixel right after it, in the same clone; the
// others are applied in place after it, a call per pixel.
// Always inlined into the per-ISA transform (simd_clones.h) that calls it.
#pragma once

#include <cstdint>

#include "kernels_cpu/activation/activation.h"
#include "kernels_cpu/activation/activation_functors.h"
#include "kernels_cpu/common/epilogue.h"
#include "kernels_cpu/common/simd_clones.h"

// For the transform passed below: a lambda not inlined would be compiled for the
// baseline ISA, not its caller's clone (the whole form then ran 3x slower).
#define EDGEGAN_ALWAYS_INLINE_LAMBDA __attribute__((always_inline))

namespace edgegan::cpu {

// `ep`'s bias and slope start at the block's first channel (Epilogue::from_column).
// Runs transform(f, residual) with f the activation when it can be inlined, else with
// the identity and no residual (nullptr) and then activates each of the `pixels`
// outputs out[p] (nullptr: not computed) in place and adds residual[p] (the array or
// an entry may be null). `width` channels per pixel.
template <typename Transform>
inline __attribute__((always_inline)) void winograd_epilogue(const Epilogue& ep, int64_t width, int pixels, float* const* out,
                                                             const float* const* residual, Transform transform) {
  switch (ep.activation) {
    case Activation::kNone: return transform([](float v) { return v; }, residual);
    case Activation::kRelu: return transform([](float v) { return v > 0.f ? v : 0.f; }, residual);
    case Activation::kLeakyRelu: {
      const float alpha = ep.alpha;
      return transform([alpha](float v) { return v > 0.f ? v : v * alpha; }, residual);
    }
    case Activation::kTanh: return transform([](float v) { return tanh_rational(v); }, residual);
    case Activation::kSigmoid: return transform([](float v) { return 0.5f + 0.5f * tanh_rational(0.5f * v); }, residual);
    case Activation::kPRelu:
      if (ep.slope) {  // a slope per channel: after the transform, in this clone's loop
        transform([](float v) { return v; }, static_cast<const float* const*>(nullptr));
        for (int p = 0; p < pixels; ++p) {
          float* o = out[p];
          if (!o) continue;
EDGEGAN_NO_ALIAS_LOOP
          for (int64_t c = 0; c < width; ++c) o[c] = prelu_select(o[c], ep.slope[c]);
          if (residual && residual[p]) add_residual(o, 1, width, width, residual[p]);
        }
        return;
      }
      break;
    default: break;
  }
  transform([](float v) { return v; }, static_cast<const float* const*>(nullptr));
  for (int p = 0; p < pixels; ++p) {
    if (!out[p]) continue;
    apply_activation(out[p], 1, width, width, ep.activation, ep.alpha, ep.beta, ep.slope);
    if (residual && residual[p]) add_residual(out[p], 1, width, width, residual[p]);
  }
}

// One output pixel's channels c0 .. c0 + n from the block's row r: o[c0 + l] = r[l],
// plus add[c0 + l] where add is set.
inline __attribute__((always_inline)) void store_window_pixel(float* __restrict o, const float* __restrict add, const float* __restrict r,
                                                              int64_t c0, int64_t n) {
  if (add) {
EDGEGAN_NO_ALIAS_LOOP
    for (int64_t l = 0; l < n; ++l) o[c0 + l] = r[l] + add[c0 + l];
  } else {
EDGEGAN_NO_ALIAS_LOOP
    for (int64_t l = 0; l < n; ++l) o[c0 + l] = r[l];
  }
}

}  // namespace edgegan::cpu
