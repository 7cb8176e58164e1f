// Grouped and depthwise convolution: the fast kernels against the grouped reference over
// random geometries (multipliers 1 and 2, strides, dilation, asymmetric pads, channel
// counts not a multiple of 8/16, groups 2/4), the reference's backward against central
// finite differences, and the backward kernels against the reference's.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels_cpu/conv2d/conv2d_grouped.h"
#include "kernels_cpu/conv2d/conv2d_reference.h"
#include "tests/kernels_cpu/backward_test_util.h"
#include "tests/test_util.h"
#include "tests/kernels_cpu/fused_prelu.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::max_abs_diff;
using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

// A random geometry with `groups` groups of cin_g inputs and cout_g outputs each.
ConvShape random_grouped(std::mt19937& rng, int64_t groups, int64_t cin_g, int64_t cout_g) {
  for (;;) {
    ConvShape s;
    s.batch = uniform_int(rng, 1, 2);
    s.in_channels = groups * cin_g;
    s.out_channels = groups * cout_g;
    for (ConvAxis* a : {&s.h, &s.w}) {
      a->in = uniform_int(rng, 1, 9);
      a->kernel = uniform_int(rng, 1, 5);
      a->stride = uniform_int(rng, 1, 2);
      a->dilation = uniform_int(rng, 0, 3) == 0 ? 2 : 1;
      a->pad_begin = uniform_int(rng, 0, static_cast<int>(a->kernel) - 1);
      a->pad_end = uniform_int(rng, 0, static_cast<int>(a->kernel) - 1);
      a->out = conv_output_length(a->in, a->kernel, a->stride, a->dilation, a->pad_begin, a->pad_end);
    }
    if (s.h.out >= 1 && s.w.out >= 1) return s;
  }
}

// Depthwise (cin_g 1, multiplier 1 or 2, channels up to 37) or grouped (groups 2..4).
ConvShape random_case(std::mt19937& rng, int trial, int64_t& groups) {
  if (trial % 2 == 0) {
    groups = uniform_int(rng, 2, 37);
    return random_grouped(rng, groups, 1, uniform_int(rng, 1, 2));
  }
  groups = uniform_int(rng, 2, 4);
  // Both paths of the ungrouped kernel: a group with < 16 inputs and one with more.
  return random_grouped(rng, groups, trial % 4 == 1 ? uniform_int(rng, 2, 7) : uniform_int(rng, 16, 19), uniform_int(rng, 1, 9));
}

size_t weight_count(const ConvShape& s, int64_t groups) {
  return static_cast<size_t>(s.out_channels * (s.in_channels / groups) * s.h.kernel * s.w.kernel);
}

TEST(Conv2DGrouped, GroupsOneReferenceIsThePlainReference) {
  std::mt19937 rng(5);
  const ConvShape s = random_grouped(rng, 1, 5, 6);
  const auto x = random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels));
  const auto w = random_floats(rng, weight_count(s, 1));
  std::vector<float> a(static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels)), b(a.size()), pa(w.size()), pb(w.size());
  conv2d_reference(s, x.data(), w.data(), a.data(), Epilogue{});
  conv2d_grouped_reference(s, 1, x.data(), w.data(), b.data(), Epilogue{});
  EXPECT_EQ(a, b);
  pack_conv2d_weights(s, w.data(), pa.data());
  pack_conv2d_grouped_weights(s, 1, w.data(), pb.data());
  EXPECT_EQ(pa, pb);
}

TEST(Conv2DGrouped, ForwardMatchesReferenceOnRandomGeometries) {
  std::mt19937 rng(71);
  for (int trial = 0; trial < 160; ++trial) {
    int64_t groups = 1;
    const ConvShape s = random_case(rng, trial, groups);
    const auto x = random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels));
    const auto w = random_floats(rng, weight_count(s, groups));
    const auto bias = random_floats(rng, static_cast<size_t>(s.out_channels));
    Epilogue ep;
    ep.bias = uniform_int(rng, 0, 1) ? bias.data() : nullptr;
    std::vector<float> slopes;
    draw_epilogue_activation(rng, ep, slopes, s.out_channels);
    const size_t out_size = static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels);
    std::vector<float> ref(out_size), packed(w.size());
    conv2d_grouped_reference(s, groups, x.data(), w.data(), ref.data(), ep);
    pack_conv2d_grouped_weights(s, groups, w.data(), packed.data());
    const bool depthwise = conv2d_is_depthwise(s, groups);
    ASSERT_EQ(depthwise, trial % 2 == 0);
    for (int threads : {1, 2}) {
      SCOPED_TRACE("trial " + std::to_string(trial) + " groups " + std::to_string(groups) + " Cin " + std::to_string(s.in_channels) +
                   " Cout " + std::to_string(s.out_channels) + " threads " + std::to_string(threads));
      std::vector<float> y(out_size, NAN);
      if (depthwise) {
        conv2d_depthwise(s, packed.data(), x.data(), y.data(), ep, threads);
      } else {
        std::vector<float> ws(static_cast<size_t>(conv2d_grouped_workspace(s, groups, threads)), NAN);
        conv2d_grouped(s, groups, packed.data(), x.data(), y.data(), ep, threads, ws.data());
      }
      ASSERT_TRUE(all_finite(y));
      ASSERT_LE(max_abs_diff(y, ref), 1e-5f + 2e-7f * static_cast<float>(s.in_channels / groups * s.h.kernel * s.w.kernel));
    }
  }
}

TEST(Conv2DGrouped, ReferenceBackwardMatchesFiniteDifferences) {
  std::mt19937 rng(72);
  for (int trial = 0; trial < 16; ++trial) {
    const int64_t groups = uniform_int(rng, 2, 3);
    const ConvShape s = random_grouped(rng, groups, uniform_int(rng, 1, 3), uniform_int(rng, 1, 2));
    auto x = random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels));
    auto w = random_floats(rng, weight_count(s, groups));
    auto b = random_floats(rng, static_cast<size_t>(s.out_channels));
    const auto g = random_floats(rng, static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels));
    auto forward = [&] {
      std::vector<float> y(g.size());
      conv2d_grouped_reference(s, groups, x.data(), w.data(), y.data(), Epilogue{b.data(), Activation::kNone, 0});
      return y;
    };
    std::vector<float> dx(x.size()), dw(w.size()), db(b.size());
    conv2d_grouped_backward_reference(s, groups, x.data(), w.data(), g.data(), dx.data(), dw.data(), db.data());
    for (size_t i = 0; i < x.size(); i += 1 + x.size() / 7) expect_close(finite_difference(x, i, g, forward), dx[i], "dx", i);
    for (size_t i = 0; i < w.size(); i += 1 + w.size() / 7) expect_close(finite_difference(w, i, g, forward), dw[i], "dw", i);
    for (size_t i = 0; i < b.size(); ++i) expect_close(finite_difference(b, i, g, forward), db[i], "db", i);
  }
}

TEST(Conv2DGrouped, BackwardKernelsMatchReferenceOnRandomGeometries) {
  std::mt19937 rng(73);
  for (int trial = 0; trial < 120; ++trial) {
    int64_t groups = 1;
    const ConvShape s = random_case(rng, trial, groups);
    const auto x = random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels));
    const auto w = random_floats(rng, weight_count(s, groups));
    const auto dy = random_floats(rng, static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels));
    std::vector<float> dx_ref(x.size()), dw_ref(w.size()), packed(w.size()), dw_ref_packed(w.size());
    conv2d_grouped_backward_reference(s, groups, x.data(), w.data(), dy.data(), dx_ref.data(), dw_ref.data(), nullptr);
    pack_conv2d_grouped_weights(s, groups, w.data(), packed.data());
    pack_conv2d_grouped_weights(s, groups, dw_ref.data(), dw_ref_packed.data());
    const bool depthwise = conv2d_is_depthwise(s, groups);
    const float tol = 1e-4f;
    for (int threads : {1, 2}) {
      SCOPED_TRACE("trial " + std::to_string(trial) + " groups " + std::to_string(groups) + " threads " + std::to_string(threads));
      std::vector<float> dx(x.size(), NAN), dw(w.size(), NAN);
      if (depthwise) {
        conv2d_depthwise_backward_input(s, packed.data(), dy.data(), dx.data(), threads);
        conv2d_depthwise_backward_weights(s, x.data(), dy.data(), dw.data(), threads);
      } else {
        ConvInputGradient view = plan_conv2d_input_gradient(conv2d_group_shape(s, groups));
        const int64_t floats = conv2d_grouped_backward_workspace(s, groups, threads);
        std::vector<float> ws(static_cast<size_t>(floats), NAN);
        conv2d_grouped_backward(s, groups, view, packed.data(), x.data(), dy.data(), dx.data(), dw.data(), ws.data(), floats, threads);
      }
      ASSERT_TRUE(all_finite(dx));
      ASSERT_TRUE(all_finite(dw));
      ASSERT_LE(max_abs_diff(dx, dx_ref), tol);
      ASSERT_LE(max_abs_diff(dw, dw_ref_packed), tol);
    }
  }
}

// The depthwise weight gradient sums every pixel in one order whatever the thread count.
TEST(Conv2DGrouped, DepthwiseBackwardIsTheSameAtAnyThreadCount) {
  std::mt19937 rng(74);
  const ConvShape s = random_grouped(rng, 40, 1, 1);
  const auto x = random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels));
  const auto dy = random_floats(rng, static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels));
  const auto w = random_floats(rng, weight_count(s, 40));
  std::vector<float> dw1(w.size()), dw2(w.size()), dx1(x.size()), dx2(x.size());
  conv2d_depthwise_backward_weights(s, x.data(), dy.data(), dw1.data(), 1);
  conv2d_depthwise_backward_weights(s, x.data(), dy.data(), dw2.data(), 2);
  conv2d_depthwise_backward_input(s, w.data(), dy.data(), dx1.data(), 1);
  conv2d_depthwise_backward_input(s, w.data(), dy.data(), dx2.data(), 2);
  EXPECT_EQ(dw1, dw2);
  EXPECT_EQ(dx1, dx2);
}

}  // namespace
}  // namespace edgegan::cpu
