// grid_sample: hand-worked points of each mode and padding, and the fast kernel against
// the reference over random shapes, modes, paddings, groups and offsets at 1 and 2
// threads, with points far outside the map and non-finite ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels_cpu/grid_sample/grid_sample.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::uniform_int;

// One output point sampled from a 1-channel 2x3 map [[0, 1, 2], [3, 4, 5]].
float sample_point(GridSampleMode mode, GridSamplePadding padding, bool align, float gx, float gy) {
  GridSampleShape s;
  s.in_h = 2, s.in_w = 3, s.mode = mode, s.padding = padding, s.align_corners = align;
  const std::vector<float> x = {0, 1, 2, 3, 4, 5};
  const float grid[2] = {gx, gy};
  float y = -1.f;
  grid_sample(s, x.data(), grid, &y, 1);
  return y;
}

TEST(GridSample, HandWorkedPoints) {
  using M = GridSampleMode;
  using P = GridSamplePadding;
  // align_corners: -1 and 1 are the outer pixel centres; (0, 0) is pixel (0.5, 1).
  EXPECT_FLOAT_EQ(sample_point(M::kBilinear, P::kZeros, true, 0.f, 0.f), 2.5f);
  EXPECT_FLOAT_EQ(sample_point(M::kBilinear, P::kZeros, true, 1.f, 1.f), 5.f);
  // Without: -1 and 1 are the outer edges; x = -1 is pixel -0.5, half of it outside.
  EXPECT_FLOAT_EQ(sample_point(M::kBilinear, P::kZeros, false, -1.f, -0.5f), 0.f);
  EXPECT_FLOAT_EQ(sample_point(M::kBilinear, P::kZeros, false, -1.f, 0.5f), 1.5f);
  EXPECT_FLOAT_EQ(sample_point(M::kBilinear, P::kBorder, false, -1.f, 0.5f), 3.f);
  // Reflection about the edges: pixel -0.5 - 1 = -1.5 reflects to 0.5.
  EXPECT_FLOAT_EQ(sample_point(M::kBilinear, P::kReflection, false, -5.f / 3.f, -0.5f), 0.5f);
  // Nearest rounds half to even: pixel 0.5 -> 0, 1.5 -> 2.
  EXPECT_FLOAT_EQ(sample_point(M::kNearest, P::kZeros, true, -0.5f, -1.f), 0.f);
  EXPECT_FLOAT_EQ(sample_point(M::kNearest, P::kZeros, true, 0.5f, -1.f), 2.f);
  // Far outside: zeros reads nothing, border the corner.
  EXPECT_FLOAT_EQ(sample_point(M::kBilinear, P::kZeros, false, 1e30f, 0.f), 0.f);
  EXPECT_FLOAT_EQ(sample_point(M::kBilinear, P::kBorder, false, 1e30f, 1e30f), 5.f);
  EXPECT_FLOAT_EQ(sample_point(M::kNearest, P::kZeros, false, std::numeric_limits<float>::quiet_NaN(), 0.f), 0.f);
  // Bicubic at a pixel centre is that pixel.
  EXPECT_FLOAT_EQ(sample_point(M::kBicubic, P::kBorder, true, 0.f, 1.f), 4.f);
}

TEST(GridSample, OffsetsAreInPixelsFromTheSourcePixel) {
  // x 1x2 map [10, 20]; output 2x4 (scale 2): x offsets 0, 0.5, -0.5, 0 from pixels 0, 0, 1, 1.
  GridSampleShape s;
  s.in_h = 1, s.in_w = 2, s.out_h = 2, s.out_w = 4, s.offsets = true, s.padding = GridSamplePadding::kBorder;
  const std::vector<float> x = {10, 20};
  std::vector<float> grid(16, 0.f);
  const float dx[4] = {0.f, 0.5f, -0.5f, 0.f};
  for (int row = 0; row < 2; ++row)
    for (int k = 0; k < 4; ++k) grid[static_cast<size_t>((row * 4 + k) * 2)] = dx[k];
  std::vector<float> y(8);
  grid_sample(s, x.data(), grid.data(), y.data(), 1);
  EXPECT_EQ(y, (std::vector<float>{10, 15, 15, 20, 10, 15, 15, 20}));
}

TEST(GridSample, FastMatchesReference) {
  std::mt19937 rng(52);
  for (int t = 0; t < 120; ++t) {
    GridSampleShape s;
    s.batch = uniform_int(rng, 1, 2);
    s.groups = uniform_int(rng, 1, 3);
    s.channels = s.groups * uniform_int(rng, 1, 9);
    s.in_h = uniform_int(rng, 1, 6), s.in_w = uniform_int(rng, 1, 6);
    s.mode = static_cast<GridSampleMode>(t % 3);
    s.padding = static_cast<GridSamplePadding>((t / 3) % 3);
    s.align_corners = (t / 9) % 2 == 1;
    s.offsets = t % 5 == 4;
    const int64_t scale = uniform_int(rng, 1, 3);
    s.out_h = s.offsets ? s.in_h * scale : uniform_int(rng, 1, 6);
    s.out_w = s.offsets ? s.in_w * scale : uniform_int(rng, 1, 6);
    std::uniform_real_distribution<float> value(-1.f, 1.f);
    const float reach = t % 4 == 0 ? 40.f : 1.5f;
    std::vector<float> x(static_cast<size_t>(s.batch * s.in_h * s.in_w * s.channels));
    for (float& v : x) v = value(rng);
    std::vector<float> grid(static_cast<size_t>(s.batch * s.out_h * s.out_w * 2 * s.groups));
    for (float& v : grid) v = reach * value(rng);
    if (t % 7 == 6) grid[0] = std::numeric_limits<float>::infinity();
    const size_t n = static_cast<size_t>(s.batch * s.out_h * s.out_w * s.channels);
    std::vector<float> want(n), got1(n, NAN), got2(n, NAN);
    grid_sample_reference(s, x.data(), grid.data(), want.data());
    grid_sample(s, x.data(), grid.data(), got1.data(), 1);
    grid_sample(s, x.data(), grid.data(), got2.data(), 2);
    for (size_t i = 0; i < n; ++i) {
      if (std::isnan(want[i])) continue;  // an infinite point under border padding
      ASSERT_NEAR(got1[i], want[i], 1e-5f) << "case " << t << " value " << i;
    }
    for (size_t i = 0; i < n; ++i)
      if (!std::isnan(got1[i])) {
        ASSERT_EQ(got1[i], got2[i]) << "case " << t << ": threads change the result";
      }
  }
}

// The backward against central differences of the reference's sum(y * r): dx, and dgrid
// where the value has one slope (a coordinate within the step of a pixel centre, the
// border's clamp or a reflection has two one-sided slopes and is skipped).
TEST(GridSample, BackwardMatchesFiniteDifferences) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> value(-1.f, 1.f);
  int checked = 0;
  for (int t = 0; t < 18; ++t) {
    GridSampleShape s;
    s.batch = 2, s.groups = 1 + t % 2, s.channels = s.groups * 2, s.in_h = 3, s.in_w = 4;
    s.mode = static_cast<GridSampleMode>(t % 3);
    s.padding = static_cast<GridSamplePadding>((t / 3) % 3);
    s.align_corners = t % 2 == 1;
    s.offsets = t % 4 == 3;
    s.out_h = s.offsets ? 6 : 2, s.out_w = s.offsets ? 8 : 3;
    std::vector<float> x(static_cast<size_t>(s.batch * s.in_h * s.in_w * s.channels)), grid(static_cast<size_t>(s.batch * s.out_h * s.out_w * 2 * s.groups));
    for (float& v : x) v = value(rng);
    for (float& v : grid) v = 1.4f * value(rng);
    const size_t ny = static_cast<size_t>(s.batch * s.out_h * s.out_w * s.channels);
    std::vector<float> r(ny), y(ny);
    for (float& v : r) v = value(rng);
    const auto loss = [&](const std::vector<float>& xs, const std::vector<float>& gs) {
      grid_sample_reference(s, xs.data(), gs.data(), y.data());
      double l = 0.0;
      for (size_t i = 0; i < ny; ++i) l += static_cast<double>(y[i]) * r[i];
      return l;
    };
    std::vector<float> dx(x.size(), 5.f), dgrid(grid.size(), 5.f);
    grid_sample_backward(s, x.data(), grid.data(), r.data(), dx.data(), false, dgrid.data(), false, 2);
    const double h = 1e-3;
    for (size_t i = 0; i < x.size(); ++i) {  // y is linear in x: one slope everywhere
      std::vector<float> a = x, b = x;
      a[i] += static_cast<float>(h), b[i] -= static_cast<float>(h);
      ASSERT_NEAR(dx[i], (loss(a, grid) - loss(b, grid)) / (2 * h), 2e-3) << "case " << t << " dx " << i;
    }
    for (size_t i = 0; i < grid.size(); ++i) {
      std::vector<float> a = grid, b = grid;
      a[i] += static_cast<float>(h), b[i] -= static_cast<float>(h);
      const double mid = loss(x, grid), right = (loss(x, a) - mid) / h, left = (mid - loss(x, b)) / h;
      if (std::fabs(right - left) > 1e-2 * std::max(1.0, std::fabs(right))) continue;  // a kink
      ASSERT_NEAR(dgrid[i], (right + left) / 2, 1e-2 * std::max(1.0, std::fabs(right))) << "case " << t << " dgrid " << i;
      ++checked;
    }
    // Accumulating adds to what is there.
    std::vector<float> dx2(x.size(), 1.f), dgrid2(grid.size(), 1.f);
    grid_sample_backward(s, x.data(), grid.data(), r.data(), dx2.data(), true, dgrid2.data(), true, 1);
    for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(dx2[i], dx[i] + 1.f, 1e-5f);
    for (size_t i = 0; i < grid.size(); ++i) ASSERT_NEAR(dgrid2[i], dgrid[i] + 1.f, 1e-5f);
  }
  EXPECT_GT(checked, 200);
}

}  // namespace
}  // namespace edgegan::cpu
