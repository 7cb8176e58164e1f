// reduce: the fast forward against the double reference over random shapes and axis
// sets (contiguous blocks and scattered axes) at 1 and 2 threads; the backward against
// central differences of the reference.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels_cpu/reduce/reduce.h"
#include "tests/kernels_cpu/backward_test_util.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

constexpr ReduceOp kOps[] = {ReduceOp::kSum, ReduceOp::kMean, ReduceOp::kMax, ReduceOp::kL2};

ReduceShape random_shape(std::mt19937& rng, int max_dim) {
  ReduceShape s;
  s.rank = uniform_int(rng, 2, 5);
  bool any = false;
  for (int k = 0; k < s.rank; ++k) {
    s.dims[k] = uniform_int(rng, 1, max_dim);
    s.reduced[k] = k > 0 && uniform_int(rng, 0, 1);
    any = any || s.reduced[k];
  }
  if (!any) s.reduced[s.rank - 1] = true;
  return s;
}

TEST(Reduce, BlockForms) {
  ReduceShape s;  // NHWC [2, 3, 4, 5] over H, W: outer 2, reduce 12, inner 5
  s.rank = 4;
  const int64_t d[] = {2, 3, 4, 5};
  for (int k = 0; k < 4; ++k) s.dims[k] = d[k];
  s.reduced[1] = s.reduced[2] = true;
  ReduceBlock b;
  ASSERT_TRUE(reduce_block(s, b));
  EXPECT_EQ(b.outer, 2);
  EXPECT_EQ(b.reduce, 12);
  EXPECT_EQ(b.inner, 5);
  s.reduced[2] = false, s.reduced[3] = true;  // H and C with W between: scattered
  EXPECT_FALSE(reduce_block(s, b));
  s.dims[2] = 1;  // ... unless W is 1
  EXPECT_TRUE(reduce_block(s, b));
}

TEST(Reduce, FastMatchesReference) {
  std::mt19937 rng(53);
  for (int trial = 0; trial < 400; ++trial) {
    const ReduceShape s = random_shape(rng, 9);
    const ReduceOp op = kOps[trial % 4];
    const std::vector<float> x = random_floats(rng, static_cast<size_t>(reduce_input_elements(s)));
    std::vector<float> want(static_cast<size_t>(reduce_output_elements(s)));
    reduce_reference(s, op, x.data(), want.data());
    for (int threads : {1, 2}) {
      std::vector<float> got(want.size(), NAN);
      reduce(s, op, x.data(), got.data(), threads);
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(got[i], want[i], 2e-6 * std::max(1.f, std::fabs(want[i])) * std::sqrt(static_cast<float>(reduce_count(s))))
            << "trial " << trial << " op " << static_cast<int>(op);
    }
  }
}

TEST(Reduce, BackwardMatchesFiniteDifferences) {
  std::mt19937 rng(54);
  for (int trial = 0; trial < 60; ++trial) {
    const ReduceShape s = random_shape(rng, 5);
    const ReduceOp op = kOps[trial % 4];
    std::vector<float> x = random_floats(rng, static_cast<size_t>(reduce_input_elements(s)));
    const std::vector<float> g = random_floats(rng, static_cast<size_t>(reduce_output_elements(s)));
    std::vector<float> y(g.size()), dx(x.size(), NAN), ws(static_cast<size_t>(reduce_backward_workspace(s, op)) + 1);
    reduce_reference(s, op, x.data(), y.data());
    reduce_backward(s, op, x.data(), y.data(), g.data(), dx.data(), false, ws.data());
    auto forward = [&] {
      std::vector<float> out(g.size());
      reduce_reference(s, op, x.data(), out.data());
      return out;
    };
    // Max is piecewise linear: a step smaller than the gaps between values stays on one piece.
    for (size_t i = 0; i < x.size(); ++i) {
      const float saved = x[i], h = op == ReduceOp::kMax ? 1e-4f : 1e-2f;
      x[i] = saved + h;
      const double up = loss(forward(), g);
      x[i] = saved - h;
      const double down = loss(forward(), g);
      x[i] = saved;
      ASSERT_NEAR(dx[i], (up - down) / (2 * h), 2e-3) << "trial " << trial << " op " << static_cast<int>(op) << " i " << i;
    }
    std::vector<float> acc(x.size(), 1.f);
    reduce_backward(s, op, x.data(), y.data(), g.data(), acc.data(), true, ws.data());
    for (size_t i = 0; i < x.size(); ++i) ASSERT_FLOAT_EQ(acc[i], 1.f + dx[i]);
  }
}

}  // namespace
}  // namespace edgegan::cpu
