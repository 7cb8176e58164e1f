// The element-wise math functions of UnaryMath (ONNX Pow with a constant exponent, Sqrt,
// Exp, Log, Erf, Abs, Neg, and Rsqrt for x / sqrt(y)), numbered as the schema's
// UnaryMathOperation. Both backends' kernels take it.
#pragma once

namespace edgegan::kernels {

enum class UnaryMathOp : int { kSqrt = 0, kRsqrt = 1, kExp = 2, kLog = 3, kErf = 4, kPow = 5, kAbs = 6, kNeg = 7 };
inline constexpr int kUnaryMathOpCount = 8;

}  // namespace edgegan::kernels

namespace edgegan::cpu {
using namespace kernels;
}  // namespace edgegan::cpu
