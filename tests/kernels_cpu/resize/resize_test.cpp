// resize: the taps against hand-computed ONNX values, the table-driven kernel against
// the reference, the backward against finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels_cpu/resize/resize.h"
#include "tests/kernels_cpu/backward_test_util.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::max_abs_diff;
using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

struct Built {
  std::vector<float> storage;
  ResizeTables tables;
  explicit Built(const ResizeShape& s) : storage(resize_table_bytes(s) / 4 + 1) { tables = resize_build_tables(s, storage.data()); }
};

ResizeShape random_resize(std::mt19937& rng, int max_in) {
  ResizeShape s;
  s.batch = uniform_int(rng, 1, 2);
  s.channels = uniform_int(rng, 0, 3) == 0 ? uniform_int(rng, 9, 19) : uniform_int(rng, 1, 4);
  s.params.mode = static_cast<ResizeMode>(uniform_int(rng, 0, 2));
  s.params.coordinates = static_cast<ResizeCoordinates>(uniform_int(rng, 0, 5));
  s.params.nearest = static_cast<ResizeNearest>(uniform_int(rng, 0, 3));
  s.params.cubic_coeff_a = uniform_int(rng, 0, 1) ? -0.75f : -0.5f;
  s.params.exclude_outside = uniform_int(rng, 0, 2) == 0;
  for (ResizeAxis* a : {&s.h, &s.w}) {
    a->in = uniform_int(rng, 1, max_in);
    const int pick = uniform_int(rng, 0, 2);
    if (pick == 0) {  // sizes
      a->out = uniform_int(rng, 1, 2 * max_in);
      a->scale = 0;
    } else {  // scales, output floor(in * scale)
      const double scales[] = {0.5, 0.75, 1.5, 2.0, 3.0, 1.0};
      a->scale = scales[uniform_int(rng, 0, 5)];
      a->out = std::max<int64_t>(1, static_cast<int64_t>(std::floor(static_cast<double>(a->in) * a->scale)));
    }
  }
  return s;
}

size_t in_size(const ResizeShape& s) { return static_cast<size_t>(s.batch * s.h.in * s.w.in * s.channels); }
size_t out_size(const ResizeShape& s) { return static_cast<size_t>(s.batch * s.h.out * s.w.out * s.channels); }

std::vector<std::pair<int, float>> taps(const ResizeAxis& a, const ResizeParams& p, int64_t o) {
  int32_t index[4];
  float weight[4];
  resize_axis_taps(a, p, o, index, weight);
  std::vector<std::pair<int, float>> v;
  for (int k = 0; k < resize_taps(p.mode); ++k) v.emplace_back(index[k], weight[k]);
  return v;
}

TEST(Resize, TapsFollowTheOnnxFormulas) {
  ResizeParams p;
  p.mode = ResizeMode::kNearest;
  p.coordinates = ResizeCoordinates::kAsymmetric;
  p.nearest = ResizeNearest::kFloor;
  const ResizeAxis up2{3, 6, 2.0};
  for (int64_t o = 0; o < 6; ++o) EXPECT_EQ(taps(up2, p, o)[0].first, o / 2);
  // half_pixel, round_prefer_ceil, 4 -> 3: x = (o + 0.5) * 4/3 - 0.5 = 0.1667, 1.5, 2.8333
  p.coordinates = ResizeCoordinates::kHalfPixel;
  p.nearest = ResizeNearest::kRoundPreferCeil;
  const ResizeAxis down{4, 3, 0};
  EXPECT_EQ(taps(down, p, 0)[0].first, 0);
  EXPECT_EQ(taps(down, p, 1)[0].first, 2);
  p.nearest = ResizeNearest::kRoundPreferFloor;
  EXPECT_EQ(taps(down, p, 1)[0].first, 1);
  EXPECT_EQ(taps(down, p, 2)[0].first, 3);
  // Linear, align_corners, 3 -> 5: x = o/2.
  p.mode = ResizeMode::kLinear;
  p.coordinates = ResizeCoordinates::kAlignCorners;
  const auto t = taps({3, 5, 0}, p, 3);
  EXPECT_EQ(t[0].first, 1);
  EXPECT_EQ(t[1].first, 2);
  EXPECT_FLOAT_EQ(t[0].second, 0.5f);
  // half_pixel at the border: x = -0.25 reads index 0 twice (edge), weights 0.25 + 0.75.
  p.coordinates = ResizeCoordinates::kHalfPixel;
  const auto b = taps(up2, p, 0);
  EXPECT_EQ(b[0].first, 0);
  EXPECT_EQ(b[1].first, 0);
  EXPECT_FLOAT_EQ(b[0].second + b[1].second, 1.f);
  // Cubic weights sum to 1; exclude_outside renormalises over the taps inside.
  p.mode = ResizeMode::kCubic;
  p.cubic_coeff_a = -0.75f;
  for (bool exclude : {false, true}) {
    p.exclude_outside = exclude;
    for (int64_t o = 0; o < 6; ++o) {
      float sum = 0;
      for (const auto& [i, w] : taps(up2, p, o)) sum += w;
      EXPECT_NEAR(sum, 1.f, 1e-6f);
    }
  }
  p.exclude_outside = true;
  const auto e = taps(up2, p, 0);  // x = -0.25: taps -2..1, only 0 and 1 inside
  EXPECT_EQ(e[0].second, 0.f);
  EXPECT_EQ(e[1].second, 0.f);
}

TEST(Resize, FastMatchesReference) {
  std::mt19937 rng(2521);
  for (int trial = 0; trial < 300; ++trial) {
    const ResizeShape s = random_resize(rng, 7);
    const Built built(s);
    const std::vector<float> x = random_floats(rng, in_size(s));
    std::vector<float> want(out_size(s)), one(out_size(s), NAN);
    resize_reference(s, x.data(), want.data());
    for (int threads : {1, 2}) {
      std::vector<float> y(out_size(s), NAN), workspace(static_cast<size_t>(resize_workspace(s, threads)) + 1, NAN);
      resize(s, built.tables, x.data(), y.data(), workspace.data(), threads);
      ASSERT_TRUE(all_finite(y)) << "trial " << trial;
      ASSERT_LE(max_abs_diff(y, want), 2e-6f) << "trial " << trial << " threads " << threads;
      if (threads == 1) one = y;
      else ASSERT_EQ(y, one) << "trial " << trial;  // the same bits at any thread count
    }
  }
}

TEST(ResizeBackward, MatchesFiniteDifferences) {
  std::mt19937 rng(2522);
  for (int trial = 0; trial < 40; ++trial) {
    const ResizeShape s = random_resize(rng, 4);
    const Built built(s);
    std::vector<float> x = random_floats(rng, in_size(s));
    const std::vector<float> g = random_floats(rng, out_size(s));
    auto forward = [&] {
      std::vector<float> y(out_size(s));
      resize_reference(s, x.data(), y.data());
      return y;
    };
    std::vector<float> dx(in_size(s), NAN);
    resize_backward(s, built.tables, g.data(), dx.data(), false, 1);
    for (size_t i = 0; i < x.size(); ++i) expect_close(finite_difference(x, i, g, forward), dx[i], "dx", i);
    std::vector<float> dx2(in_size(s), NAN), dx3(in_size(s), 1.f);
    resize_backward(s, built.tables, g.data(), dx2.data(), false, 2);
    ASSERT_EQ(dx2, dx) << "trial " << trial;
    resize_backward(s, built.tables, g.data(), dx3.data(), true, 2);
    for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(dx3[i], dx[i] + 1.f, 1e-5f) << "trial " << trial;
  }
}

}  // namespace
}  // namespace edgegan::cpu
