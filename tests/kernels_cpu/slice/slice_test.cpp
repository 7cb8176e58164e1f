#include <gtest/gtest.h>

#include <random>

#include "kernels_cpu/slice/slice.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

SliceShape random_shape(std::mt19937& rng) {
  SliceShape s;
  s.outer = testing::uniform_int(rng, 1, 5);
  s.length = testing::uniform_int(rng, 1, 9);
  s.inner = testing::uniform_int(rng, 1, 37);
  s.step = testing::uniform_int(rng, 1, 3) * (rng() % 3 == 0 ? -1 : 1);
  s.start = testing::uniform_int(rng, 0, static_cast<int>(s.length) - 1);
  const int64_t room = s.step > 0 ? (s.length - 1 - s.start) / s.step : s.start / -s.step;
  s.count = testing::uniform_int(rng, 1, static_cast<int>(room) + 1);
  return s;
}

TEST(Slice, MatchesTheReferenceOnRandomShapes) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const SliceShape s = random_shape(rng);
    const auto x = testing::random_floats(rng, static_cast<size_t>(s.outer * s.length * s.inner));
    std::vector<float> want(static_cast<size_t>(s.outer * s.count * s.inner)), got(want.size(), -7.f);
    slice_reference(s, x.data(), want.data());
    for (int threads : {1, 2}) {
      slice(s, x.data(), got.data(), threads);
      ASSERT_EQ(got, want) << "trial " << trial;
    }
  }
}

TEST(Slice, LargeSlicesSplitAcrossThreadsGiveTheSameBits) {
  std::mt19937 rng(12);
  const SliceShape s{4, 64, 512, 3, 2, 30};
  const auto x = testing::random_floats(rng, static_cast<size_t>(s.outer * s.length * s.inner));
  std::vector<float> want(static_cast<size_t>(s.outer * s.count * s.inner)), got(want.size());
  slice_reference(s, x.data(), want.data());
  slice(s, x.data(), got.data(), 2);
  EXPECT_EQ(got, want);
}

// The slice is linear: its backward is the transpose, <slice(x), dy> = <x, slice_backward(dy)>.
TEST(Slice, BackwardIsTheTransposeAndAccumulates) {
  std::mt19937 rng(13);
  for (int trial = 0; trial < 200; ++trial) {
    const SliceShape s = random_shape(rng);
    const size_t in = static_cast<size_t>(s.outer * s.length * s.inner), out = static_cast<size_t>(s.outer * s.count * s.inner);
    const auto x = testing::random_floats(rng, in), dy = testing::random_floats(rng, out), prior = testing::random_floats(rng, in);
    std::vector<float> y(out), dx(in, 123.f);
    slice_reference(s, x.data(), y.data());
    slice_backward(s, dy.data(), dx.data(), false, 1 + trial % 2);
    double lhs = 0, rhs = 0;
    for (size_t k = 0; k < out; ++k) lhs += static_cast<double>(y[k]) * dy[k];
    for (size_t k = 0; k < in; ++k) rhs += static_cast<double>(x[k]) * dx[k];
    ASSERT_NEAR(lhs, rhs, 1e-4 * (1 + std::abs(lhs))) << "trial " << trial;
    std::vector<float> acc = prior;
    slice_backward(s, dy.data(), acc.data(), true, 1 + trial % 2);
    for (size_t k = 0; k < in; ++k) ASSERT_FLOAT_EQ(acc[k], prior[k] + dx[k]) << "trial " << trial << " at " << k;
  }
}

}  // namespace
}  // namespace edgegan::cpu
