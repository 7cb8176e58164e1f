// prelu: the fast forward against the reference, the backward against finite differences,
// the same bits at 1 and 2 threads.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kernels_cpu/prelu/prelu.h"
#include "tests/kernels_cpu/backward_test_util.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

TEST(PRelu, ScalesNegativeValuesPerChannel) {
  const std::vector<float> x = {1, -2, -3, 4}, slope = {0.5f, 0.25f};
  std::vector<float> y(4);
  prelu(2, 2, slope.data(), x.data(), y.data(), 1);
  EXPECT_EQ(y, (std::vector<float>{1, -0.5f, -1.5f, 4}));
}

TEST(PRelu, FastForwardMatchesReference) {
  std::mt19937 rng(1);
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t pixels = trial == 0 ? 40000 : uniform_int(rng, 1, 300);
    const int64_t channels = uniform_int(rng, 0, 3) == 0 ? 1 : uniform_int(rng, 1, 37);
    const std::vector<float> x = random_floats(rng, static_cast<size_t>(pixels * channels));
    const std::vector<float> slope = random_floats(rng, static_cast<size_t>(channels));
    std::vector<float> want(x.size());
    prelu_reference(pixels, channels, slope.data(), x.data(), want.data());
    for (int threads : {1, 2}) {
      std::vector<float> y(x.size(), NAN);
      prelu(pixels, channels, slope.data(), x.data(), y.data(), threads);
      EXPECT_EQ(y, want);
      std::vector<float> inplace = x;
      prelu(pixels, channels, slope.data(), inplace.data(), inplace.data(), threads);
      EXPECT_EQ(inplace, want);
    }
  }
}

TEST(PRelu, BackwardMatchesFiniteDifferencesAndThreads) {
  std::mt19937 rng(2);
  for (int trial = 0; trial < 40; ++trial) {
    const int64_t pixels = trial == 0 ? 20000 : uniform_int(rng, 1, 40);
    const int64_t channels = uniform_int(rng, 0, 3) == 0 ? 1 : uniform_int(rng, 1, 19);
    std::vector<float> x = random_floats(rng, static_cast<size_t>(pixels * channels));
    for (float& v : x) v += v < 0 ? -0.2f : 0.2f;  // away from the kink
    std::vector<float> slope = random_floats(rng, static_cast<size_t>(channels));
    const std::vector<float> g = random_floats(rng, x.size());
    std::vector<float> dx1(x.size()), dx2(x.size()), ds1(slope.size(), 0.f), ds2(slope.size(), 0.f);
    prelu_backward(pixels, channels, slope.data(), x.data(), g.data(), dx1.data(), false, ds1.data(), 1);
    prelu_backward(pixels, channels, slope.data(), x.data(), g.data(), dx2.data(), false, ds2.data(), 2);
    EXPECT_EQ(dx1, dx2);
    EXPECT_EQ(ds1, ds2);
    std::vector<float> acc(x.size(), 1.f);
    prelu_backward(pixels, channels, slope.data(), x.data(), g.data(), acc.data(), true, nullptr, 2);
    // (Within a few ulps of 1: compilers may fuse the accumulating form's dy*slope + dx into one FMA.)
    for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(acc[i], 1.f + dx1[i], 1e-6f);
    if (pixels > 100) continue;
    auto forward = [&] {
      std::vector<float> y(x.size());
      prelu_reference(pixels, channels, slope.data(), x.data(), y.data());
      return y;
    };
    for (size_t i = 0; i < x.size(); i += 1 + x.size() / 7) expect_close(finite_difference(x, i, g, forward), dx1[i], "dx", i);
    for (size_t c = 0; c < slope.size(); ++c) expect_close(finite_difference(slope, c, g, forward), ds1[c], "dslope", c);
  }
}

}  // namespace
}  // namespace edgegan::cpu
