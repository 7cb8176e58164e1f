// pool: the fast forward and backward against the reference (random geometries,
// threads 1 and 2), the reference's backward against finite differences, and fixed
// cases checked by hand (ceil_mode, count_include_pad, ties).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "kernels_cpu/pool/pool.h"
#include "tests/kernels_cpu/backward_test_util.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::max_abs_diff;
using edgegan::testing::random_floats;

struct Case {
  PoolShape s;
  PoolKind kind = PoolKind::kAverage;
  bool include_pad = false;
};

Case random_case(std::mt19937& rng) {
  for (;;) {
    Case c;
    c.kind = uniform_int(rng, 0, 1) ? PoolKind::kMax : PoolKind::kAverage;
    c.include_pad = uniform_int(rng, 0, 1) != 0;
    c.s.batch = uniform_int(rng, 1, 3);
    c.s.channels = uniform_int(rng, 0, 3) == 0 ? uniform_int(rng, 17, 40) : uniform_int(rng, 1, 9);
    const bool ceil = uniform_int(rng, 0, 1) != 0;
    for (ConvAxis* a : {&c.s.h, &c.s.w}) {
      a->in = uniform_int(rng, 1, 9);
      a->kernel = uniform_int(rng, 1, 4);
      a->stride = uniform_int(rng, 1, 3);
      a->dilation = c.kind == PoolKind::kMax && uniform_int(rng, 0, 3) == 0 ? 2 : 1;
      a->pad_begin = uniform_int(rng, 0, static_cast<int>(a->kernel) / 2);
      a->pad_end = uniform_int(rng, 0, static_cast<int>(a->kernel) / 2);
      a->out = pool_output_length(a->in, a->kernel, a->stride, a->dilation, a->pad_begin, a->pad_end, ceil);
    }
    if (c.s.h.out >= 1 && c.s.w.out >= 1) return c;
  }
}

size_t in_size(const PoolShape& s) { return static_cast<size_t>(s.batch * s.h.in * s.w.in * s.channels); }
size_t out_size(const PoolShape& s) { return static_cast<size_t>(s.batch * s.h.out * s.w.out * s.channels); }

// Distinct values at least 1 apart: a finite difference of step 0.1 never changes a window's maximum.
std::vector<float> distinct_values(std::mt19937& rng, size_t n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), -static_cast<float>(n) / 2);
  std::shuffle(v.begin(), v.end(), rng);
  return v;
}

TEST(Pool, FastMatchesReferenceOnRandomGeometries) {
  std::mt19937 rng(25);
  for (int iter = 0; iter < 300; ++iter) {
    const Case c = random_case(rng);
    const std::vector<float> x = random_floats(rng, in_size(c.s));
    std::vector<float> want(out_size(c.s));
    pool_reference(c.s, c.kind, c.include_pad, x.data(), want.data());
    for (int threads : {1, 2}) {
      std::vector<float> got(out_size(c.s), NAN);
      pool(c.s, c.kind, c.include_pad, x.data(), got.data(), threads);
      ASSERT_TRUE(all_finite(got));
      ASSERT_LE(max_abs_diff(got, want), 1e-5f) << "iter " << iter;
    }
  }
}

TEST(Pool, BackwardMatchesReferenceAndIsDeterministic) {
  std::mt19937 rng(26);
  for (int iter = 0; iter < 300; ++iter) {
    const Case c = random_case(rng);
    const std::vector<float> x = random_floats(rng, in_size(c.s));
    const std::vector<float> dy = random_floats(rng, out_size(c.s));
    std::vector<float> want(in_size(c.s));
    pool_backward_reference(c.s, c.kind, c.include_pad, x.data(), dy.data(), want.data());
    std::vector<float> first;
    for (int threads : {1, 2}) {
      std::vector<float> got(in_size(c.s), NAN);
      pool_backward(c.s, c.kind, c.include_pad, x.data(), dy.data(), got.data(), threads);
      ASSERT_TRUE(all_finite(got));
      ASSERT_LE(max_abs_diff(got, want), 1e-5f) << "iter " << iter;
      if (first.empty()) first = got;
      else ASSERT_EQ(got, first);
    }
  }
}

TEST(Pool, ReferenceBackwardMatchesFiniteDifferences) {
  std::mt19937 rng(27);
  for (int iter = 0; iter < 40; ++iter) {
    const Case c = random_case(rng);
    std::vector<float> x = distinct_values(rng, in_size(c.s));
    const std::vector<float> g = random_floats(rng, out_size(c.s));
    std::vector<float> y(out_size(c.s)), dx(in_size(c.s));
    pool_backward_reference(c.s, c.kind, c.include_pad, x.data(), g.data(), dx.data());
    auto forward = [&] {
      pool_reference(c.s, c.kind, c.include_pad, x.data(), y.data());
      return y;
    };
    for (size_t i = 0; i < x.size(); i += 1 + x.size() / 7) expect_close(finite_difference(x, i, g, forward), dx[i], "dx", i);
  }
}

TEST(Pool, HandCheckedCases) {
  // 1x4 map, one channel: kernel 3, stride 2, pad 1, ceil_mode -> output 3 (the last window starts at 3, inside the input).
  PoolShape s;
  s.channels = 1;
  s.h = {1, 1, 1, 1, 0, 0, 1};
  s.w = {4, 3, 2, 1, 1, 1, pool_output_length(4, 3, 2, 1, 1, 1, true)};
  ASSERT_EQ(s.w.out, 3);
  EXPECT_EQ(pool_output_length(4, 3, 2, 1, 1, 1, false), 2);
  const std::vector<float> x = {1, 2, 3, 4};
  std::vector<float> y(3);
  pool(s, PoolKind::kAverage, false, x.data(), y.data(), 1);
  EXPECT_EQ(y, (std::vector<float>{1.5f, 3.f, 4.f}));
  pool(s, PoolKind::kAverage, true, x.data(), y.data(), 1);  // divisors 3, 3, 2 (window [3, 5) of the padded [-1, 5))
  EXPECT_FLOAT_EQ(y[0], 1.f);
  EXPECT_FLOAT_EQ(y[1], 3.f);
  EXPECT_FLOAT_EQ(y[2], 2.f);
  pool(s, PoolKind::kMax, false, x.data(), y.data(), 1);
  EXPECT_EQ(y, (std::vector<float>{2.f, 4.f, 4.f}));
  // Ties: the first maximum in scan order takes the gradient.
  const std::vector<float> tie = {5, 5, 5, 5}, dy = {1, 1, 1};
  std::vector<float> dx(4);
  pool_backward(s, PoolKind::kMax, false, tie.data(), dy.data(), dx.data(), 1);
  EXPECT_EQ(dx, (std::vector<float>{1.f, 1.f, 0.f, 1.f}));  // windows {0,1}, {1,2,3}, {3}
}

TEST(Pool, GlobalPoolIsTheMeanAndMaxOfTheMap) {
  std::mt19937 rng(28);
  PoolShape s;
  s.batch = 2;
  s.channels = 19;
  s.h = {5, 5, 1, 1, 0, 0, 1};
  s.w = {7, 7, 1, 1, 0, 0, 1};
  const std::vector<float> x = random_floats(rng, in_size(s));
  std::vector<float> avg(out_size(s)), mx(out_size(s));
  pool(s, PoolKind::kAverage, false, x.data(), avg.data(), 2);
  pool(s, PoolKind::kMax, false, x.data(), mx.data(), 2);
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t k = 0; k < 19; ++k) {
      double sum = 0;
      float m = -INFINITY;
      for (int64_t p = 0; p < 35; ++p) {
        sum += x[static_cast<size_t>((n * 35 + p) * 19 + k)];
        m = std::max(m, x[static_cast<size_t>((n * 35 + p) * 19 + k)]);
      }
      EXPECT_NEAR(avg[static_cast<size_t>(n * 19 + k)], sum / 35, 1e-5);
      EXPECT_EQ(mx[static_cast<size_t>(n * 19 + k)], m);
    }
}

}  // namespace
}  // namespace edgegan::cpu
