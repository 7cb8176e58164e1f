#include "kernels_cpu/unary_math/unary_math.h"

#include <algorithm>
#include <cmath>

namespace edgegan::cpu {
namespace {

constexpr int64_t kBlock = 16384;

// One loop per function, so the compiler sees a plain body to vectorise.
template <typename F>
void each(int64_t count, const float* x, float* y, int threads, F f) {
  const int64_t blocks = (count + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && blocks > 1)
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t end = std::min(count, (b + 1) * kBlock);
    for (int64_t i = b * kBlock; i < end; ++i) y[i] = f(x[i]);
  }
}

float derivative(UnaryMathOp op, float e, float x) {
  switch (op) {
    case UnaryMathOp::kSqrt: return 0.5f / std::sqrt(x);
    case UnaryMathOp::kRsqrt: return -0.5f / (x * std::sqrt(x));
    case UnaryMathOp::kExp: return std::exp(x);
    case UnaryMathOp::kLog: return 1.f / x;
    case UnaryMathOp::kErf: return 1.1283791670955126f * std::exp(-x * x);  // 2/sqrt(pi) e^(-x²)
    case UnaryMathOp::kPow:
      if (e == 2.f) return 2.f * x;
      if (e == 0.f) return 0.f;
      return e * std::pow(x, e - 1.f);
    case UnaryMathOp::kAbs: return x > 0.f ? 1.f : x < 0.f ? -1.f : 0.f;
    case UnaryMathOp::kNeg: return -1.f;
  }
  return 0.f;
}

}  // namespace

float unary_math_value(UnaryMathOp op, float e, float x) {
  switch (op) {
    case UnaryMathOp::kSqrt: return std::sqrt(x);
    case UnaryMathOp::kRsqrt: return 1.f / std::sqrt(x);
    case UnaryMathOp::kExp: return std::exp(x);
    case UnaryMathOp::kLog: return std::log(x);
    case UnaryMathOp::kErf: return std::erf(x);
    case UnaryMathOp::kPow:
      if (e == 2.f) return x * x;
      if (e == 0.5f) return std::sqrt(x);
      if (e == 1.f) return x;
      return std::pow(x, e);
    case UnaryMathOp::kAbs: return std::fabs(x);
    case UnaryMathOp::kNeg: return -x;
  }
  return x;
}

void unary_math_reference(int64_t count, UnaryMathOp op, float e, const float* x, float* y) {
  for (int64_t i = 0; i < count; ++i) y[i] = unary_math_value(op, e, x[i]);
}

void unary_math(int64_t count, UnaryMathOp op, float e, const float* x, float* y, int threads) {
  switch (op) {
    case UnaryMathOp::kSqrt: return each(count, x, y, threads, [](float v) { return std::sqrt(v); });
    case UnaryMathOp::kRsqrt: return each(count, x, y, threads, [](float v) { return 1.f / std::sqrt(v); });
    case UnaryMathOp::kAbs: return each(count, x, y, threads, [](float v) { return std::fabs(v); });
    case UnaryMathOp::kNeg: return each(count, x, y, threads, [](float v) { return -v; });
    case UnaryMathOp::kPow:
      if (e == 2.f) return each(count, x, y, threads, [](float v) { return v * v; });
      if (e == 0.5f) return each(count, x, y, threads, [](float v) { return std::sqrt(v); });
      break;
    default: break;
  }
  each(count, x, y, threads, [op, e](float v) { return unary_math_value(op, e, v); });
}

void unary_math_backward(int64_t count, UnaryMathOp op, float e, const float* x, const float* dy, float* dx, bool accumulate, int threads) {
  const int64_t blocks = (count + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && blocks > 1)
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t end = std::min(count, (b + 1) * kBlock);
    for (int64_t i = b * kBlock; i < end; ++i) {
      const float g = dy[i] * derivative(op, e, x[i]);
      dx[i] = accumulate ? dx[i] + g : g;
    }
  }
}

}  // namespace edgegan::cpu
