// An activation as the CUDA kernels take it: which one, numbered as cpu::Activation and
// the model file's schema::Activation (the CUDA backend asserts all three agree, in
// engine/backend/cuda/cuda_kernel.h), and its two parameters (LeakyRelu slope and Elu
// alpha in alpha; Selu gamma, Clip max and HardSigmoid offset in beta; see
// kernels_cpu/activation). A plain struct, so host code builds it and kernels receive it
// by value.
#pragma once

namespace edgegan::cuda {

// kernels_cuda/ includes nothing from kernels_cpu/, so the CPU's enum is restated here
// and tied to it by static_assert where both are visible (the backend).
enum class Activation : int {
  kNone = 0, kRelu = 1, kLeakyRelu = 2, kTanh = 3, kSigmoid = 4,
  kElu = 5, kSelu = 6, kClip = 7, kHardSigmoid = 8, kHardSwish = 9, kSoftplus = 10, kMish = 11,
  // One slope in alpha. The op kernels never get it from a file: a fused PRelu has a slope
  // per channel, which FusedPRelu (engine/backend/cuda/cuda_kernel.h) applies as a pass.
  kPRelu = 12
};
inline constexpr int kActivationCount = 13;

struct ActivationParams {
  Activation kind = Activation::kNone;
  float alpha = 0.01f;
  float beta = 0.f;
};

}  // namespace edgegan::cuda
