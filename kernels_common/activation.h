// The engine's activations: one enum for every backend, numbered as the model file's
// schema::Activation (engine/ops/op_def.h asserts it), so a file's value is handed to
// any backend's kernels as it is. The definitions live with each backend
// (kernels_cpu/activation/activation.h: cpu::activate; kernels_cuda/common/activation.cuh:
// cuda::activate), each of which must have a case for every value here.
#pragma once

namespace edgegan::kernels {

// Parameters: LeakyRelu slope alpha; Elu alpha; Selu alpha and gamma (beta); Clip min
// (alpha) and max (beta); HardSigmoid alpha*x + beta. HardSwish, Softplus, Mish: none.
// PRelu: LeakyRelu with a slope per channel, which only an epilogue carries (a fused
// PRelu op); where a function takes no slope array, alpha is the channel's slope.
// Gelu: x * (1 + erf(x / sqrt 2)) / 2; GeluTanh: its tanh approximation,
// x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))) / 2; Silu: x * sigmoid(x). None takes a parameter.
enum class Activation : int {
  kNone = 0, kRelu = 1, kLeakyRelu = 2, kTanh = 3, kSigmoid = 4,
  kElu = 5, kSelu = 6, kClip = 7, kHardSigmoid = 8, kHardSwish = 9, kSoftplus = 10, kMish = 11, kPRelu = 12,
  kGelu = 13, kGeluTanh = 14, kSilu = 15
};
inline constexpr int kActivationCount = 16;

// An activation with its two parameters, as kernels receive it by value (alpha: LeakyRelu
// slope, Elu alpha, Clip min...; beta: Selu gamma, Clip max, HardSigmoid offset).
struct ActivationParams {
  Activation kind = Activation::kNone;
  float alpha = 0.01f;
  float beta = 0.f;
};

}  // namespace edgegan::kernels
