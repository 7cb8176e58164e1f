// channel affine: the kernels against their definitions (and, for the backward, finite differences or the forward they invert).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels_cpu/channel_affine/channel_affine.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::max_abs_diff;
using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

TEST(ChannelAffine, ScalesAndShiftsPerChannel) {
  const std::vector<float> x = {1, 2, 3, 4}, scale = {2, -1}, shift = {0.5f, 1};
  std::vector<float> y(4);
  channel_affine(2, 2, scale.data(), shift.data(), x.data(), y.data(), Activation::kRelu, 0);
  EXPECT_EQ(y, (std::vector<float>{2.5f, 0, 6.5f, 0}));
}

}  // namespace
}  // namespace edgegan::cpu
