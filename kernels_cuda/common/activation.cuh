// The engine's activations on the device, the same definitions as the CPU's reference
// (kernels_cpu/activation/activation.h: cpu::activate), in single precision.
#pragma once

#include "kernels_cuda/common/activation.h"

namespace edgegan::cuda {

// log(1 + exp(v)) without overflow, as the CPU's softplus_exact.
__device__ __forceinline__ float softplus_exact(float v) { return v > 20.f ? v : log1pf(expf(v)); }

__device__ __forceinline__ float activate(float v, const ActivationParams& a) {
  switch (a.kind) {
    case 1: return v > 0.f ? v : 0.f;                                    // Relu
    case 2: return v > 0.f ? v : v * a.alpha;                            // LeakyRelu
    case 3: return tanhf(v);                                             // Tanh
    case 4: return 1.f / (1.f + expf(-v));                               // Sigmoid
    case 5: return v > 0.f ? v : a.alpha * expm1f(v);                    // Elu
    case 6: return v > 0.f ? a.beta * v : a.beta * a.alpha * expm1f(v);  // Selu
    case 7: return fminf(a.beta, fmaxf(a.alpha, v));                     // Clip
    case 8: return fminf(1.f, fmaxf(0.f, a.alpha * v + a.beta));         // HardSigmoid
    case 9: return v * fminf(1.f, fmaxf(0.f, v / 6.f + 0.5f));           // HardSwish
    case 10: return softplus_exact(v);                                   // Softplus
    case 11: return v * tanhf(softplus_exact(v));                        // Mish
    default: return v;                                                   // None
  }
}

}  // namespace edgegan::cuda
