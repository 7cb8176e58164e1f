// binary: the fast forward against the reference over random broadcast shapes, in place,
// at 1 and 2 threads; the backward against the double reference and finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels_cpu/binary/binary.h"
#include "tests/kernels_cpu/backward_test_util.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::max_abs_diff;
using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

constexpr BinaryOp kOps[] = {BinaryOp::kAdd, BinaryOp::kSub, BinaryOp::kMul, BinaryOp::kDiv};

// Operand values for Div's divisor kept away from 0.
std::vector<float> operand(std::mt19937& rng, int64_t n, bool divisor) {
  std::vector<float> v = random_floats(rng, static_cast<size_t>(n));
  if (divisor)
    for (float& f : v) f = f < 0 ? f - 0.5f : f + 0.5f;
  return v;
}

BinaryShape random_shape(std::mt19937& rng) {
  BinaryShape s;
  s.rank = uniform_int(rng, 1, 5);
  const int pattern = uniform_int(rng, 0, 4);
  for (int k = 0; k < s.rank; ++k) {
    s.out[k] = uniform_int(rng, 0, 4) == 0 ? 1 : uniform_int(rng, 1, 9);
    s.a[k] = s.b[k] = s.out[k];
  }
  const int last = s.rank - 1;
  switch (pattern) {
    case 0: break;  // equal shapes
    case 1:         // per channel: [N or 1, 1, 1, C]
      for (int k = 0; k < last; ++k)
        if (k > 0 || uniform_int(rng, 0, 1)) s.b[k] = 1;
      break;
    case 2:  // per-sample scalar
      for (int k = 1; k < s.rank; ++k) s.a[k] = 1;
      break;
    default:  // anything
      for (int k = 0; k < s.rank; ++k) {
        const int r = uniform_int(rng, 0, 2);
        if (r == 1) s.a[k] = 1;
        if (r == 2) s.b[k] = 1;
      }
  }
  return s;
}

TEST(Binary, BroadcastsAlongStorageDimensions) {
  // [1, 2, 3] + [1, 1, 3] and * [1, 2, 1]
  BinaryShape s;
  s.rank = 3;
  for (int k = 0; k < 3; ++k) s.out[k] = s.a[k] = (k == 0 ? 1 : k + 1);
  s.b[0] = 1, s.b[1] = 1, s.b[2] = 3;
  const std::vector<float> a = {1, 2, 3, 4, 5, 6}, b = {10, 20, 30};
  std::vector<float> y(6);
  binary(s, BinaryOp::kAdd, a.data(), b.data(), y.data(), 1);
  EXPECT_EQ(y, (std::vector<float>{11, 22, 33, 14, 25, 36}));
  s.b[1] = 2, s.b[2] = 1;
  binary(s, BinaryOp::kMul, a.data(), b.data(), y.data(), 1);
  EXPECT_EQ(y, (std::vector<float>{10, 20, 30, 80, 100, 120}));
  std::vector<float> db(2);
  const std::vector<float> g(6, 1.f);
  binary_backward(s, BinaryOp::kMul, 1, a.data(), b.data(), g.data(), db.data(), false, 1);
  EXPECT_EQ(db, (std::vector<float>{6, 15}));
}

TEST(Binary, FastForwardMatchesReference) {
  std::mt19937 rng(1);
  for (int trial = 0; trial < 300; ++trial) {
    BinaryShape s = random_shape(rng);
    if (uniform_int(rng, 0, 1)) std::swap(s.a, s.b);
    ASSERT_TRUE(binary_shape_valid(s));
    const BinaryOp op = kOps[trial % 4];
    const std::vector<float> a = operand(rng, binary_elements(s.a, s.rank), false);
    const std::vector<float> b = operand(rng, binary_elements(s.b, s.rank), op == BinaryOp::kDiv);
    const int64_t n = binary_elements(s.out, s.rank);
    std::vector<float> want(static_cast<size_t>(n));
    binary_reference(s, op, a.data(), b.data(), want.data());
    for (int threads : {1, 2}) {
      std::vector<float> y(static_cast<size_t>(n), NAN);
      binary(s, op, a.data(), b.data(), y.data(), threads);
      EXPECT_EQ(y, want) << "trial " << trial << " threads " << threads;
      // In place over the operand that has the output's shape.
      if (binary_elements(s.a, s.rank) == n) {
        std::vector<float> inplace = a;
        binary(s, op, inplace.data(), b.data(), inplace.data(), threads);
        EXPECT_EQ(inplace, want) << "in place, trial " << trial;
      }
    }
  }
}

TEST(Binary, LargeEqualShapesSplitAcrossThreads) {
  std::mt19937 rng(2);
  BinaryShape s;
  s.rank = 4;
  const int64_t dims[4] = {2, 33, 17, 37};
  for (int k = 0; k < 4; ++k) s.out[k] = s.a[k] = s.b[k] = dims[k];
  const int64_t n = binary_elements(s.out, 4);
  const std::vector<float> a = operand(rng, n, false), b = operand(rng, n, true);
  for (BinaryOp op : kOps) {
    std::vector<float> want(static_cast<size_t>(n)), y(static_cast<size_t>(n));
    binary_reference(s, op, a.data(), b.data(), want.data());
    binary(s, op, a.data(), b.data(), y.data(), 2);
    EXPECT_EQ(y, want);
    for (int which : {0, 1}) {
      std::vector<float> d1(static_cast<size_t>(n)), d2(static_cast<size_t>(n)), ref(static_cast<size_t>(n));
      const std::vector<float> g = random_floats(rng, static_cast<size_t>(n));
      binary_backward(s, op, which, a.data(), b.data(), g.data(), d1.data(), false, 1);
      binary_backward(s, op, which, a.data(), b.data(), g.data(), d2.data(), false, 2);
      binary_backward_reference(s, op, which, a.data(), b.data(), g.data(), ref.data());
      EXPECT_EQ(d1, d2);
      EXPECT_LE(max_abs_diff(d1, ref), 1e-5f);
    }
  }
}

TEST(Binary, BackwardMatchesReferenceAndIsDeterministic) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 300; ++trial) {
    BinaryShape s = random_shape(rng);
    if (uniform_int(rng, 0, 1)) std::swap(s.a, s.b);
    const BinaryOp op = kOps[trial % 4];
    const std::vector<float> a = operand(rng, binary_elements(s.a, s.rank), false);
    const std::vector<float> b = operand(rng, binary_elements(s.b, s.rank), op == BinaryOp::kDiv);
    const std::vector<float> g = random_floats(rng, static_cast<size_t>(binary_elements(s.out, s.rank)));
    for (int which : {0, 1}) {
      const size_t m = static_cast<size_t>(binary_elements(which == 0 ? s.a : s.b, s.rank));
      std::vector<float> ref(m), d1(m, NAN), d2(m, NAN);
      binary_backward_reference(s, op, which, a.data(), b.data(), g.data(), ref.data());
      binary_backward(s, op, which, a.data(), b.data(), g.data(), d1.data(), false, 1);
      binary_backward(s, op, which, a.data(), b.data(), g.data(), d2.data(), false, 2);
      ASSERT_TRUE(all_finite(d1));
      EXPECT_EQ(d1, d2) << "trial " << trial;
      EXPECT_LE(max_abs_diff(d1, ref), 1e-4f * (1.f + static_cast<float>(binary_elements(s.out, s.rank)) / static_cast<float>(m)))
          << "trial " << trial << " operand " << which;
      // accumulate adds to what is there (the reduced sums start from it: a rounding apart).
      std::vector<float> acc(m, 1.f);
      binary_backward(s, op, which, a.data(), b.data(), g.data(), acc.data(), true, 2);
      for (size_t k = 0; k < m; ++k) EXPECT_NEAR(acc[k], 1.f + d1[k], 1e-5f * (1.f + std::abs(d1[k])));
    }
  }
}

TEST(Binary, BackwardMatchesFiniteDifferences) {
  std::mt19937 rng(4);
  for (int trial = 0; trial < 40; ++trial) {
    BinaryShape s = random_shape(rng);
    const BinaryOp op = kOps[trial % 4];
    std::vector<float> a = operand(rng, binary_elements(s.a, s.rank), false);
    std::vector<float> b = operand(rng, binary_elements(s.b, s.rank), op == BinaryOp::kDiv);
    const std::vector<float> g = random_floats(rng, static_cast<size_t>(binary_elements(s.out, s.rank)));
    auto forward = [&] {
      std::vector<float> y(static_cast<size_t>(binary_elements(s.out, s.rank)));
      binary_reference(s, op, a.data(), b.data(), y.data());
      return y;
    };
    for (int which : {0, 1}) {
      std::vector<float>& v = which == 0 ? a : b;
      std::vector<float> d(v.size());
      binary_backward(s, op, which, a.data(), b.data(), g.data(), d.data(), false, 2);
      for (size_t i = 0; i < v.size(); i += 1 + v.size() / 5) {
        if (op == BinaryOp::kDiv && which == 1) {
          // 1/b is curved: a smaller step than the shared helper's.
          const float saved = v[i];
          v[i] = saved + 1e-3f;
          const double up = loss(forward(), g);
          v[i] = saved - 1e-3f;
          const double down = loss(forward(), g);
          v[i] = saved;
          EXPECT_NEAR((up - down) / 2e-3, d[i], 2e-2 * (1.0 + std::abs(d[i])));
        } else {
          expect_close(finite_difference(v, i, g, forward), d[i], which == 0 ? "da" : "db", i);
        }
      }
    }
  }
}

}  // namespace
}  // namespace edgegan::cpu
