// pad: the fast kernel against the reference, the backward against finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels_cpu/pad/pad.h"
#include "tests/kernels_cpu/backward_test_util.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::max_abs_diff;
using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

PadShape random_pad(std::mt19937& rng, int max_in) {
  for (;;) {
    PadShape s;
    s.batch = uniform_int(rng, 1, 3);
    s.channels = uniform_int(rng, 0, 3) == 0 ? uniform_int(rng, 9, 21) : uniform_int(rng, 1, 5);
    s.mode = static_cast<PadMode>(uniform_int(rng, 0, 3));
    s.value = uniform_int(rng, 0, 1) ? 0.f : 0.75f;
    for (PadAxis* a : {&s.h, &s.w}) {
      a->in = uniform_int(rng, 1, max_in);
      a->pad_begin = uniform_int(rng, -2, 6);
      a->pad_end = uniform_int(rng, -2, 6);
    }
    if (s.h.hi() > s.h.lo() && s.w.hi() > s.w.lo() && s.h.out() >= 1 && s.w.out() >= 1) return s;
  }
}

size_t in_size(const PadShape& s) { return static_cast<size_t>(s.batch * s.h.in * s.w.in * s.channels); }
size_t out_size(const PadShape& s) { return static_cast<size_t>(s.batch * s.h.out() * s.w.out() * s.channels); }

TEST(Pad, SourceIndexFollowsNumpyModes) {
  const PadAxis a{3, 4, 4};  // input [0 1 2], 4 on each side
  std::vector<int64_t> reflect, edge, wrap;
  for (int64_t o = 0; o < a.out(); ++o) {
    reflect.push_back(pad_source(a, PadMode::kReflect, o));
    edge.push_back(pad_source(a, PadMode::kEdge, o));
    wrap.push_back(pad_source(a, PadMode::kWrap, o));
  }
  // numpy.pad([0,1,2], 4, mode=...)
  EXPECT_EQ(reflect, (std::vector<int64_t>{0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2}));
  EXPECT_EQ(edge, (std::vector<int64_t>{0, 0, 0, 0, 0, 1, 2, 2, 2, 2, 2}));
  EXPECT_EQ(wrap, (std::vector<int64_t>{2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0}));
  EXPECT_EQ(pad_source(a, PadMode::kConstant, 0), -1);
  // Crop one at the start, pad two at the end: the border comes from the cropped [1, 3).
  const PadAxis c{3, -1, 2};
  EXPECT_EQ(pad_source(c, PadMode::kReflect, 2), 1);
  EXPECT_EQ(pad_source(c, PadMode::kEdge, 3), 2);
}

TEST(Pad, FastMatchesReference) {
  std::mt19937 rng(2501);
  for (int trial = 0; trial < 300; ++trial) {
    const PadShape s = random_pad(rng, 9);
    const std::vector<float> x = random_floats(rng, in_size(s));
    std::vector<float> want(out_size(s));
    pad_reference(s, x.data(), want.data());
    for (int threads : {1, 2}) {
      std::vector<float> y(out_size(s), NAN);
      pad(s, x.data(), y.data(), threads);
      ASSERT_TRUE(all_finite(y)) << "trial " << trial;
      ASSERT_EQ(max_abs_diff(y, want), 0.f) << "trial " << trial << " threads " << threads;
    }
  }
}

TEST(PadBackward, MatchesFiniteDifferences) {
  std::mt19937 rng(2502);
  for (int trial = 0; trial < 40; ++trial) {
    const PadShape s = random_pad(rng, 5);
    std::vector<float> x = random_floats(rng, in_size(s));
    const std::vector<float> g = random_floats(rng, out_size(s));
    auto forward = [&] {
      std::vector<float> y(out_size(s));
      pad_reference(s, x.data(), y.data());
      return y;
    };
    std::vector<float> dx(in_size(s), NAN);
    pad_backward(s, g.data(), dx.data(), false, 1);
    for (size_t i = 0; i < x.size(); ++i) expect_close(finite_difference(x, i, g, forward), dx[i], "dx", i);
    // Thread counts agree bit for bit, and accumulate adds.
    std::vector<float> dx2(in_size(s), NAN), dx3(in_size(s), 1.f);
    pad_backward(s, g.data(), dx2.data(), false, 2);
    ASSERT_EQ(max_abs_diff(dx2, dx), 0.f) << "trial " << trial;
    pad_backward(s, g.data(), dx3.data(), true, 2);
    for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(dx3[i], dx[i] + 1.f, 1e-5f) << "trial " << trial;
  }
}

}  // namespace
}  // namespace edgegan::cpu
