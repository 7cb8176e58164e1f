// loss: the kernels against their definitions (and, for the backward, finite differences or the forward they invert).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels_cpu/loss/loss.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::max_abs_diff;
using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

TEST(Losses, ValuesAndGradients) {
  const std::vector<float> p = {-3.f, -0.2f, 0.f, 0.7f, 40.f}, t = {0.f, 1.f, 0.5f, 1.f, 0.f};
  std::vector<float> g(p.size());
  // BCE with logits: -(t log s(z) + (1-t) log(1-s(z))), mean; gradient (s(z) - t)/N.
  const double bce = bce_with_logits_loss(5, p.data(), t.data(), g.data());
  double expected = 0;
  for (size_t i = 0; i < 4; ++i) {
    const double s = 1 / (1 + std::exp(-static_cast<double>(p[i])));
    expected += -(t[i] * std::log(s) + (1 - t[i]) * std::log(1 - s));
  }
  expected += 40.0;  // z = 40, t = 0: log(1 + e^40) = 40 to double precision; the stable form never overflows
  EXPECT_NEAR(bce, expected / 5, 1e-9);
  for (size_t i = 0; i < 5; ++i) EXPECT_NEAR(g[i], (1 / (1 + std::exp(-static_cast<double>(p[i]))) - t[i]) / 5, 1e-7);
  EXPECT_TRUE(std::isfinite(bce_with_logits_loss(1, std::vector<float>{1e30f}.data(), t.data(), g.data())));
  const double mse = mse_loss(5, p.data(), t.data(), g.data());
  EXPECT_NEAR(mse, (9 + 1.44 + 0.25 + 0.09 + 1600) / 5, 1e-5);
  EXPECT_NEAR(g[0], 2 * -3.0 / 5, 1e-7);
  const double l1 = l1_loss(5, p.data(), t.data(), g.data());
  EXPECT_NEAR(l1, (3 + 1.2 + 0.5 + 0.3 + 40) / 5, 1e-5);
  EXPECT_NEAR(g[1], -0.2, 1e-7);
}

}  // namespace
}  // namespace edgegan::cpu
