// Helpers of the backward kernels' tests: finite differences and random geometries.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels_common/conv_geometry.h"
#include "tests/test_util.h"

namespace edgegan::cpu {

using edgegan::testing::uniform_int;

// sum(y * g) in double: the scalar loss whose gradient w.r.t. y is g.
inline double loss(const std::vector<float>& y, const std::vector<float>& g) {
  double l = 0;
  for (size_t i = 0; i < y.size(); ++i) l += static_cast<double>(y[i]) * g[i];
  return l;
}

// Central difference of loss(forward(v)) w.r.t. v[i].
template <typename Forward>
double finite_difference(std::vector<float>& v, size_t i, const std::vector<float>& g, Forward forward) {
  constexpr float kStep = 0.1f;
  const float saved = v[i];
  v[i] = saved + kStep;
  const double up = loss(forward(), g);
  v[i] = saved - kStep;
  const double down = loss(forward(), g);
  v[i] = saved;
  return (up - down) / (2.0 * kStep);
}

// max_abs_diff ignores NaN (std::max keeps the old value), so outputs filled with NaN
// beforehand are checked for being fully written separately.
inline bool all_finite(const std::vector<float>& v) {
  return std::all_of(v.begin(), v.end(), [](float f) { return std::isfinite(f); });
}

inline void expect_close(double numeric, double analytic, const char* what, size_t index) {
  EXPECT_NEAR(numeric, analytic, 2e-3 * (1.0 + std::abs(analytic))) << what << "[" << index << "]";
}

inline ConvShape random_conv_transpose(std::mt19937& rng) {
  for (;;) {
    ConvShape s;
    s.batch = uniform_int(rng, 1, 3);
    s.in_channels = uniform_int(rng, 1, 7);
    s.out_channels = uniform_int(rng, 1, 7);
    for (ConvAxis* a : {&s.h, &s.w}) {
      a->in = uniform_int(rng, 1, 6);
      a->kernel = uniform_int(rng, 1, 5);
      a->stride = uniform_int(rng, 1, 3);
      a->dilation = uniform_int(rng, 0, 4) == 0 ? 2 : 1;
      a->pad_begin = uniform_int(rng, uniform_int(rng, 0, 6) == 0 ? -1 : 0, static_cast<int>(a->kernel) - 1);
      a->pad_end = uniform_int(rng, 0, static_cast<int>(a->kernel) - 1);
      a->out = conv_transpose_output_length(a->in, a->kernel, a->stride, a->dilation, a->pad_begin, a->pad_end,
                                    uniform_int(rng, 0, static_cast<int>(std::max(a->stride, a->dilation)) - 1));
    }
    if (s.h.out >= 1 && s.w.out >= 1) return s;
  }
}

inline ConvShape random_conv(std::mt19937& rng) {
  for (;;) {
    ConvShape s;
    s.batch = uniform_int(rng, 1, 3);
    s.in_channels = uniform_int(rng, 1, 7);
    s.out_channels = uniform_int(rng, 1, 7);
    for (ConvAxis* a : {&s.h, &s.w}) {
      a->in = uniform_int(rng, 1, 9);
      a->kernel = uniform_int(rng, 1, 5);
      a->stride = uniform_int(rng, 1, 3);
      a->dilation = uniform_int(rng, 0, 4) == 0 ? 2 : 1;
      a->pad_begin = uniform_int(rng, 0, static_cast<int>(a->kernel) - 1);
      a->pad_end = uniform_int(rng, 0, static_cast<int>(a->kernel) - 1);
      a->out = conv_output_length(a->in, a->kernel, a->stride, a->dilation, a->pad_begin, a->pad_end);
    }
    if (s.h.out >= 1 && s.w.out >= 1) return s;
  }
}


}  // namespace edgegan::cpu
