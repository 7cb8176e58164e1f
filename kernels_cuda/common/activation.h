// An activation as the CUDA kernels take it: its number (cpu::Activation and the model
// file's, 0 None .. 11 Mish; never 12 PRelu, which the op kernels apply as a pass:
// FusedPRelu in engine/backend/cuda/cuda_kernel.h) and its two parameters (LeakyRelu slope and Elu alpha in
// alpha; Selu gamma, Clip max and HardSigmoid offset in beta; see kernels_cpu/activation).
// A plain struct, so host code builds it and kernels receive it by value.
#pragma once

namespace edgegan::cuda {

struct ActivationParams {
  int kind = 0;
  float alpha = 0.01f;
  float beta = 0.f;
};

}  // namespace edgegan::cuda
