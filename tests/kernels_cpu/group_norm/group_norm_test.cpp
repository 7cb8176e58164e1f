// group norm: the fast forward against the reference (random shapes, groups 1, C and
// between, in place, a large mean offset), the backward against finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels_cpu/group_norm/group_norm.h"
#include "tests/kernels_cpu/backward_test_util.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::max_abs_diff;
using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

GroupNormShape random_shape(std::mt19937& rng, int max_channels = 21) {
  GroupNormShape s;
  s.batch = uniform_int(rng, 1, 3);
  const int kind = uniform_int(rng, 0, 3);
  s.pixels = kind == 0 ? 1 : kind == 1 ? uniform_int(rng, 2, 40) : kind == 2 ? uniform_int(rng, 250, 600) : uniform_int(rng, 1, 9);
  s.channels = uniform_int(rng, 1, max_channels);
  std::vector<int64_t> divisors;
  for (int64_t g = 1; g <= s.channels; ++g)
    if (s.channels % g == 0) divisors.push_back(g);
  const int pick = uniform_int(rng, 0, 2);  // 1, C, or any divisor
  s.groups = pick == 0 ? 1 : pick == 1 ? s.channels : divisors[static_cast<size_t>(uniform_int(rng, 0, static_cast<int>(divisors.size()) - 1))];
  return s;
}

std::string text(const GroupNormShape& s) {
  return "N=" + std::to_string(s.batch) + " P=" + std::to_string(s.pixels) + " C=" + std::to_string(s.channels) + " G=" + std::to_string(s.groups);
}

TEST(GroupNorm, InstanceNormOfKnownValues) {
  // One sample, 2 pixels, 2 channels, groups = channels: each channel is (-1, 1) after normalising.
  const GroupNormShape s{1, 2, 2, 2};
  const std::vector<float> x = {1, 10, 3, 30}, scale = {2, 1}, shift = {0, 5};
  std::vector<float> y(4);
  group_norm(s, x.data(), scale.data(), shift.data(), 0.f, y.data(), Activation::kNone, 0.f, 0.f, nullptr, 1);
  const std::vector<float> want = {-2, 4, 2, 6};
  EXPECT_LT(max_abs_diff(y, want), 1e-6f);
}

TEST(GroupNorm, FastMatchesReference) {
  std::mt19937 rng(25);
  for (int trial = 0; trial < 60; ++trial) {
    const GroupNormShape s = random_shape(rng);
    const size_t count = static_cast<size_t>(s.batch * s.pixels * s.channels);
    const auto x = random_floats(rng, count, -2.f, 3.f);
    const auto scale = random_floats(rng, static_cast<size_t>(s.channels), -1.5f, 1.5f);
    const auto shift = random_floats(rng, static_cast<size_t>(s.channels));
    const auto act = static_cast<Activation>(uniform_int(rng, 0, kActivationCount - 1));
    const float eps = trial % 2 ? 1e-5f : 1e-3f;
    std::vector<float> want(count);
    group_norm_reference(s, x.data(), scale.data(), shift.data(), eps, want.data(), act, 0.2f);
    std::vector<float> got1(count, NAN), got2(count, NAN);
    group_norm(s, x.data(), scale.data(), shift.data(), eps, got1.data(), act, 0.2f, 0.f, nullptr, 1);
    group_norm(s, x.data(), scale.data(), shift.data(), eps, got2.data(), act, 0.2f, 0.f, nullptr, 2);
    ASSERT_TRUE(all_finite(got1)) << text(s);
    EXPECT_LT(max_abs_diff(got1, want), 2e-5f) << text(s);
    EXPECT_EQ(0, std::memcmp(got1.data(), got2.data(), count * 4)) << "threads 1 and 2 differ, " << text(s);
    // In place, and a planned workspace full of NaN: the same bits.
    std::vector<float> in_place = x;
    std::vector<float> workspace(static_cast<size_t>(group_norm_workspace(s)), std::numeric_limits<float>::quiet_NaN());
    group_norm(s, in_place.data(), scale.data(), shift.data(), eps, in_place.data(), act, 0.2f, 0.f, workspace.data(), 2);
    EXPECT_EQ(0, std::memcmp(got1.data(), in_place.data(), count * 4)) << "in place, " << text(s);
  }
}

TEST(GroupNorm, LargeMeanOffsetStaysAccurate) {
  // Means 100x (and 1000x) the standard deviation: the statistics must not cancel.
  std::mt19937 rng(7);
  for (float offset : {100.f, -1000.f}) {
    for (int trial = 0; trial < 6; ++trial) {
      const GroupNormShape s = random_shape(rng);
      const size_t count = static_cast<size_t>(s.batch * s.pixels * s.channels);
      auto x = random_floats(rng, count, -1.7f, 1.7f);  // std ~1
      for (float& v : x) v += offset;
      const std::vector<float> scale(static_cast<size_t>(s.channels), 1.f), shift(static_cast<size_t>(s.channels), 0.f);
      std::vector<float> want(count), got(count);
      group_norm_reference(s, x.data(), scale.data(), shift.data(), 1e-5f, want.data(), Activation::kNone, 0.f);
      group_norm(s, x.data(), scale.data(), shift.data(), 1e-5f, got.data(), Activation::kNone, 0.f, 0.f, nullptr, 2);
      EXPECT_LT(max_abs_diff(got, want), 1e-5f) << text(s) << " offset " << offset;
    }
  }
}

TEST(GroupNorm, BackwardMatchesFiniteDifferences) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 12; ++trial) {
    GroupNormShape s = random_shape(rng, 9);
    if (s.pixels > 12) s.pixels = uniform_int(rng, 1, 12);
    if (trial == 0) s = {2, 300, 4, 2};  // more than one block of pixels
    const size_t count = static_cast<size_t>(s.batch * s.pixels * s.channels), C = static_cast<size_t>(s.channels);
    auto x = random_floats(rng, count, -3.f, 3.f);
    auto scale = random_floats(rng, C, -1.5f, 1.5f);
    auto shift = random_floats(rng, C);
    const auto g = random_floats(rng, count);
    const float eps = 1e-2f;
    auto forward = [&] {
      std::vector<float> y(count);
      group_norm_reference(s, x.data(), scale.data(), shift.data(), eps, y.data(), Activation::kNone, 0.f);
      return y;
    };
    std::vector<float> dx(count, NAN), dscale(C, 0.5f), dshift(C, -0.25f);
    group_norm_backward(s, x.data(), scale.data(), eps, g.data(), dx.data(), false, dscale.data(), dshift.data(), nullptr, 1);
    ASSERT_TRUE(all_finite(dx)) << text(s);
    const size_t checks = std::min<size_t>(count, 40);
    for (size_t k = 0; k < checks; ++k) {
      const size_t i = count <= 40 ? k : static_cast<size_t>(uniform_int(rng, 0, static_cast<int>(count) - 1));
      expect_close(finite_difference(x, i, g, forward), dx[i], "dx", i);
    }
    for (size_t c = 0; c < C; ++c) {
      expect_close(finite_difference(scale, c, g, forward), dscale[c] - 0.5f, "dscale", c);
      expect_close(finite_difference(shift, c, g, forward), dshift[c] + 0.25f, "dshift", c);
    }
    // Two threads, accumulating into dx, a NaN-filled planned workspace: dx added, bits otherwise equal.
    std::vector<float> dx2(count, 1.f), dscale2(C, 0.5f), dshift2(C, -0.25f);
    std::vector<float> workspace(static_cast<size_t>(group_norm_backward_workspace(s)), std::numeric_limits<float>::quiet_NaN());
    group_norm_backward(s, x.data(), scale.data(), eps, g.data(), dx2.data(), true, dscale2.data(), dshift2.data(), workspace.data(), 2);
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(dx2[i], dx[i] + 1.f) << text(s) << " index " << i;
    EXPECT_EQ(dscale2, dscale) << text(s);
    EXPECT_EQ(dshift2, dshift) << text(s);
    // Only the input's gradient.
    std::vector<float> dx3(count);
    group_norm_backward(s, x.data(), scale.data(), eps, g.data(), dx3.data(), false, nullptr, nullptr, nullptr, 2);
    EXPECT_EQ(dx3, dx) << text(s);
  }
}

}  // namespace
}  // namespace edgegan::cpu
