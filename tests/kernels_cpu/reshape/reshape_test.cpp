// reshape: the kernels against their definitions (and, for the backward, finite differences or the forward they invert).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels_cpu/reshape/reshape.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::max_abs_diff;
using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

TEST(Layout, NchwNhwcRoundTrip) {
  std::mt19937 rng(5);
  const auto x = random_floats(rng, 2 * 3 * 4 * 5);
  std::vector<float> nhwc(x.size()), back(x.size());
  nchw_to_nhwc(2, 3, 4, 5, x.data(), nhwc.data());
  EXPECT_EQ(nhwc[((1 * 4 + 2) * 5 + 3) * 3 + 1], x[((1 * 3 + 1) * 4 + 2) * 5 + 3]);
  nhwc_to_nchw(2, 3, 4, 5, nhwc.data(), back.data());
  EXPECT_EQ(back, x);
}

}  // namespace
}  // namespace edgegan::cpu
