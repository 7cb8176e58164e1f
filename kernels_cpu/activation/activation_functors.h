// The activations as branch-free scalar functors, for loops that the compiler
// vectorises with whatever ISA their file is built for: activation.cpp and epilogue.cpp (baseline) and
// the AVX-512 pixel-lanes family include it. Internal to kernels_cpu.
#pragma once

#include <algorithm>
#include <cmath>

#include "kernels_cpu/activation/activation.h"

namespace edgegan::cpu {
// Internal linkage on purpose: files built with different ISA flags each get their own
// copy. Shared inline definitions would let the linker keep an AVX-512 copy for the
// baseline callers too, and a CPU without AVX-512 would fault in them.
namespace {

// tanh as a [13/6] minimax rational function of x (the approximation Eigen uses for
// float): branch-free, so a loop of it vectorises, where std::tanh is a libm call per
// element (the RGB head's 12288 outputs per 64x64 image took longer than its GEMM).
// Max error against tanh: 3.7e-7 absolute (6 ulps near 1), 1e-6 relative (tested);
// exactly +-1 beyond |x| = 9, where float tanh is.
inline float tanh_rational(float x) {
  const float c = std::min(7.90531110763549805f, std::max(-7.90531110763549805f, x));
  const float x2 = c * c;
  float p = -2.76076847742355e-16f;
  p = p * x2 + 2.00018790482477e-13f;
  p = p * x2 - 8.60467152213735e-11f;
  p = p * x2 + 5.12229709037114e-08f;
  p = p * x2 + 1.48572235717979e-05f;
  p = p * x2 + 6.37261928875436e-04f;
  p = p * x2 + 4.89352455891786e-03f;
  float q = 1.19825839466702e-06f;
  q = q * x2 + 1.18534705686654e-04f;
  q = q * x2 + 2.26843463243900e-03f;
  q = q * x2 + 4.89352518554385e-03f;
  const float r = c * p / q;
  return std::abs(x) < 9.f ? r : (x > 0.f ? 1.f : -1.f);  // tanh(9) rounds to 1 in float
}

// Calls body(f) with the activation as a branch-free functor, one instantiation per
// activation, so every loop over it vectorises (with -fno-trapping-math, LeakyReLU's
// v * alpha too; tanh through the rational function above).
// softplus, branch-free: max(v, 0) + log1p(exp(-|v|)).
inline float softplus_fn(float v) { return std::max(v, 0.f) + std::log1p(std::exp(-std::abs(v))); }

template <typename Body>
void with_activation(Activation activation, float alpha, Body body, float beta = 0.f) {
  switch (activation) {
    case Activation::kNone: return body([](float v) { return v; });
    case Activation::kRelu: return body([](float v) { return v > 0.f ? v : 0.f; });
    case Activation::kLeakyRelu: return body([alpha](float v) { return v > 0.f ? v : v * alpha; });
    case Activation::kTanh: return body(tanh_rational);
    case Activation::kSigmoid: return body([](float v) { return 0.5f + 0.5f * tanh_rational(0.5f * v); });  // (1 + tanh(v/2)) / 2
    case Activation::kElu: return body([alpha](float v) { return v > 0.f ? v : alpha * std::expm1(v); });
    case Activation::kSelu: return body([alpha, beta](float v) { return v > 0.f ? beta * v : beta * alpha * std::expm1(v); });
    case Activation::kClip: return body([alpha, beta](float v) { return std::min(beta, std::max(alpha, v)); });
    case Activation::kHardSigmoid: return body([alpha, beta](float v) { return std::min(1.f, std::max(0.f, alpha * v + beta)); });
    case Activation::kHardSwish: return body([](float v) { return v * std::min(1.f, std::max(0.f, v * (1.f / 6.f) + 0.5f)); });
    case Activation::kSoftplus: return body(softplus_fn);
    case Activation::kMish: return body([](float v) { return v * tanh_rational(softplus_fn(v)); });
    case Activation::kPRelu: return body([alpha](float v) { return v > 0.f ? v : v * alpha; });  // one slope (see Activation)
    case Activation::kGelu: return body([](float v) { return 0.5f * v * (1.f + std::erf(v * 0.70710678118654752f)); });
    case Activation::kGeluTanh:
      return body([](float v) { return 0.5f * v * (1.f + tanh_rational(kGeluTanhScale * (v + kGeluTanhCubic * v * v * v))); });
    case Activation::kSilu: return body([](float v) { return v / (1.f + std::exp(-v)); });
  }
}

// PRelu of one value with its channel's slope: the product computed, then selected, so a
// loop of it is a vector blend (with the product inside the branch GCC keeps such a loop
// scalar and branchy). Exact, so every kernel and clone that uses it gives the same bits.
inline float prelu_select(float v, float slope) {
  const float scaled = v * slope;
  return v > 0.f ? v : scaled;
}

// activation_run.h's loop, compiled in each family's file with that file's flags.
inline void activate_run_body(float* y, int64_t n, Activation activation, float alpha, float beta) {
  if (activation == Activation::kNone) return;
  with_activation(
      activation, alpha, [&](auto f) {
        for (int64_t i = 0; i < n; ++i) y[i] = f(y[i]);
      },
      beta);
}

}  // namespace
}  // namespace edgegan::cpu
