// The engine's activations on the device, numbered as cpu::Activation and the
// model file (0 none, 1 Relu, 2 LeakyRelu, 3 Tanh, 4 Sigmoid). The later ones (5 Elu ..
// 11 Mish) are not here: the CUDA backend refuses a model that uses them (cuda_backend.cpp).
#pragma once

namespace edgegan::cuda {

__device__ __forceinline__ float activate(float v, int activation, float alpha) {
  switch (activation) {
    case 1: return v > 0.f ? v : 0.f;
    case 2: return v > 0.f ? v : v * alpha;
    case 3: return tanhf(v);
    case 4: return 1.f / (1.f + expf(-v));
    default: return v;
  }
}

}  // namespace edgegan::cuda
