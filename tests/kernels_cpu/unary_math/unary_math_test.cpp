// unary_math: the fast forward equals the reference bit for bit (in place too) at 1 and
// 2 threads; the backward against central differences of each function in double.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels_cpu/unary_math/unary_math.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

struct Case {
  UnaryMathOp op;
  float exponent;
  float lo, hi;  // the function's domain, kept off its kinks and poles
};
constexpr Case kCases[] = {{UnaryMathOp::kSqrt, 1, 0.1f, 4}, {UnaryMathOp::kRsqrt, 1, 0.1f, 4}, {UnaryMathOp::kExp, 1, -3, 3},
                           {UnaryMathOp::kLog, 1, 0.1f, 4},  {UnaryMathOp::kErf, 1, -3, 3},    {UnaryMathOp::kPow, 2, -3, 3},
                           {UnaryMathOp::kPow, 0.5f, 0.1f, 4}, {UnaryMathOp::kPow, 3, -2, 2},  {UnaryMathOp::kPow, -1.5f, 0.2f, 3},
                           {UnaryMathOp::kAbs, 1, 0.05f, 2}, {UnaryMathOp::kNeg, 1, -2, 2}};

double exact(UnaryMathOp op, double e, double x) {
  switch (op) {
    case UnaryMathOp::kSqrt: return std::sqrt(x);
    case UnaryMathOp::kRsqrt: return 1 / std::sqrt(x);
    case UnaryMathOp::kExp: return std::exp(x);
    case UnaryMathOp::kLog: return std::log(x);
    case UnaryMathOp::kErf: return std::erf(x);
    case UnaryMathOp::kPow: return std::pow(x, e);
    case UnaryMathOp::kAbs: return std::fabs(x);
    case UnaryMathOp::kNeg: return -x;
  }
  return 0;
}

TEST(UnaryMath, FastEqualsReferenceAndTheExactFunction) {
  std::mt19937 rng(51);
  for (const Case& c : kCases)
    for (int trial = 0; trial < 6; ++trial) {
      const int64_t n = uniform_int(rng, 1, 40000);
      std::vector<float> x = random_floats(rng, static_cast<size_t>(n), c.lo, c.hi);
      if (c.op == UnaryMathOp::kAbs)
        for (size_t i = 0; i < x.size(); i += 2) x[i] = -x[i];
      std::vector<float> want(x.size()), got(x.size());
      unary_math_reference(n, c.op, c.exponent, x.data(), want.data());
      for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(want[i], exact(c.op, c.exponent, x[i]), 4e-6 * std::max(1.0, std::fabs(exact(c.op, c.exponent, x[i]))));
      for (int threads : {1, 2}) {
        unary_math(n, c.op, c.exponent, x.data(), got.data(), threads);
        EXPECT_EQ(got, want) << "op " << static_cast<int>(c.op) << " threads " << threads;
      }
      std::vector<float> in_place = x;
      unary_math(n, c.op, c.exponent, in_place.data(), in_place.data(), 2);
      EXPECT_EQ(in_place, want);
    }
}

TEST(UnaryMath, BackwardMatchesCentralDifferences) {
  std::mt19937 rng(52);
  for (const Case& c : kCases) {
    const int64_t n = 3000;
    std::vector<float> x = random_floats(rng, n, c.lo, c.hi), dy = random_floats(rng, n);
    if (c.op == UnaryMathOp::kAbs)
      for (size_t i = 0; i < x.size(); i += 2) x[i] = -x[i];
    for (bool accumulate : {false, true}) {
      std::vector<float> dx(n, accumulate ? 0.5f : NAN);
      unary_math_backward(n, c.op, c.exponent, x.data(), dy.data(), dx.data(), accumulate, 2);
      for (int64_t i = 0; i < n; ++i) {
        const double h = 1e-4, d = (exact(c.op, c.exponent, x[i] + h) - exact(c.op, c.exponent, x[i] - h)) / (2 * h);
        const double want = dy[i] * d + (accumulate ? 0.5 : 0.0);
        ASSERT_NEAR(dx[i], want, 1e-4 * std::max(1.0, std::fabs(want))) << "op " << static_cast<int>(c.op) << " x " << x[i];
      }
    }
  }
}

}  // namespace
}  // namespace edgegan::cpu
