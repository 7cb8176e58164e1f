// depth_to_space: the fast kernel against the reference in both directions and both
// channel orders; each direction's backward (the other direction) against finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels_cpu/depth_to_space/depth_to_space.h"
#include "tests/kernels_cpu/backward_test_util.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::max_abs_diff;
using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

DepthToSpaceShape random_shape(std::mt19937& rng) {
  DepthToSpaceShape s;
  s.batch = uniform_int(rng, 1, 3);
  s.height = uniform_int(rng, 1, 5);
  s.width = uniform_int(rng, 1, 6);
  s.channels = uniform_int(rng, 0, 3) == 0 ? uniform_int(rng, 9, 19) : uniform_int(rng, 1, 5);
  s.block = uniform_int(rng, 1, 4);
  s.mode = static_cast<DepthToSpaceMode>(uniform_int(rng, 0, 1));
  return s;
}

size_t elements(const DepthToSpaceShape& s) {
  return static_cast<size_t>(s.batch * s.height * s.width * s.channels * s.block * s.block);
}

TEST(DepthToSpace, PixelShuffleChannelOrder) {
  // One depth pixel of 8 channels, block 2, C = 2: space pixel (h, w) channel c.
  DepthToSpaceShape s;
  s.channels = 2;
  s.block = 2;
  std::vector<float> depth(8);
  for (int i = 0; i < 8; ++i) depth[static_cast<size_t>(i)] = static_cast<float>(i);
  std::vector<float> space(8);
  s.mode = DepthToSpaceMode::kCRD;  // channel c*4 + h*2 + w
  depth_to_space(s, true, depth.data(), space.data(), false, 1);
  EXPECT_EQ(space, (std::vector<float>{0, 4, 1, 5, 2, 6, 3, 7}));
  s.mode = DepthToSpaceMode::kDCR;  // channel (h*2 + w)*2 + c
  depth_to_space(s, true, depth.data(), space.data(), false, 1);
  EXPECT_EQ(space, (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(DepthToSpace, FastMatchesReferenceBothWays) {
  std::mt19937 rng(2511);
  for (int trial = 0; trial < 200; ++trial) {
    const DepthToSpaceShape s = random_shape(rng);
    for (bool to_space : {true, false}) {
      const std::vector<float> x = random_floats(rng, elements(s));
      std::vector<float> want(elements(s));
      depth_to_space_reference(s, to_space, x.data(), want.data());
      for (int threads : {1, 2}) {
        std::vector<float> y(elements(s), NAN);
        depth_to_space(s, to_space, x.data(), y.data(), false, threads);
        ASSERT_TRUE(all_finite(y)) << "trial " << trial;
        ASSERT_EQ(max_abs_diff(y, want), 0.f) << "trial " << trial << " to_space " << to_space << " threads " << threads;
        // Accumulating adds the same values.
        std::vector<float> acc(elements(s), 1.f);
        depth_to_space(s, to_space, x.data(), acc.data(), true, threads);
        for (size_t i = 0; i < acc.size(); ++i) ASSERT_EQ(acc[i], want[i] + 1.f);
      }
      // The other direction inverts it.
      std::vector<float> back(elements(s));
      depth_to_space(s, !to_space, want.data(), back.data(), false, 2);
      ASSERT_EQ(back, x) << "trial " << trial;
    }
  }
}

TEST(DepthToSpaceBackward, MatchesFiniteDifferences) {
  std::mt19937 rng(2512);
  for (int trial = 0; trial < 10; ++trial) {
    DepthToSpaceShape s = random_shape(rng);
    s.batch = 1;
    s.channels = std::min<int64_t>(s.channels, 3);
    for (bool to_space : {true, false}) {
      std::vector<float> x = random_floats(rng, elements(s));
      const std::vector<float> g = random_floats(rng, elements(s));
      auto forward = [&] {
        std::vector<float> y(elements(s));
        depth_to_space_reference(s, to_space, x.data(), y.data());
        return y;
      };
      std::vector<float> dx(elements(s));
      depth_to_space(s, !to_space, g.data(), dx.data(), false, 1);
      for (size_t i = 0; i < x.size(); ++i) expect_close(finite_difference(x, i, g, forward), dx[i], "dx", i);
    }
  }
}

}  // namespace
}  // namespace edgegan::cpu
