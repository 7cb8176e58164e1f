// The engine's activations on the device, the same definitions as the CPU's reference
// (kernels_cpu/activation/activation.h: cpu::activate), in single precision.
#pragma once

#include "kernels_cuda/common/activation.h"

namespace edgegan::cuda {

// A new activation in the enum (kernels_common/activation.h) fails here until activate()
// has its case: never the identity by default. Update the count with the case.
static_assert(kActivationCount == 16, "activate() below has a case for each of 16 activations: add the new one's");

// log(1 + exp(v)) without overflow, as the CPU's softplus_exact.
__device__ __forceinline__ float softplus_exact(float v) { return v > 20.f ? v : log1pf(expf(v)); }

__device__ __forceinline__ float activate(float v, const ActivationParams& a) {
  // None is the default case: the branch layout the kernels were tuned with (a `case
  // kNone` compiles to different code). Every file's activation is validated on load.
  switch (a.kind) {
    case Activation::kRelu: return v > 0.f ? v : 0.f;
    case Activation::kLeakyRelu:
    case Activation::kPRelu: return v > 0.f ? v : v * a.alpha;
    case Activation::kTanh: return tanhf(v);
    case Activation::kSigmoid: return 1.f / (1.f + expf(-v));
    case Activation::kElu: return v > 0.f ? v : a.alpha * expm1f(v);
    case Activation::kSelu: return v > 0.f ? a.beta * v : a.beta * a.alpha * expm1f(v);
    case Activation::kClip: return fminf(a.beta, fmaxf(a.alpha, v));
    case Activation::kHardSigmoid: return fminf(1.f, fmaxf(0.f, a.alpha * v + a.beta));
    case Activation::kHardSwish: return v * fminf(1.f, fmaxf(0.f, v / 6.f + 0.5f));
    case Activation::kSoftplus: return softplus_exact(v);
    case Activation::kMish: return v * tanhf(softplus_exact(v));
    case Activation::kGelu: return 0.5f * v * (1.f + erff(v * 0.70710678118654752f));
    case Activation::kGeluTanh: return 0.5f * v * (1.f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
    case Activation::kSilu: return v / (1.f + expf(-v));
    default: return v;  // Activation::kNone
  }
}

}  // namespace edgegan::cuda
