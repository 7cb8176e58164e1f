// Grouped transposed convolution: the grouped split kernel against the grouped reference
// over random geometries (groups 2-4, narrow and wide groups, fp16 weights), the
// reference's backward against central finite differences and the backward kernels
// against the reference's.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels_cpu/common/half.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_grouped.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_reference.h"
#include "tests/kernels_cpu/backward_test_util.h"
#include "tests/test_util.h"
#include "tests/kernels_cpu/fused_prelu.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::max_abs_diff;
using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

// random_conv_transpose's geometry with `groups` groups of cin_g inputs and cout_g outputs.
ConvShape random_grouped(std::mt19937& rng, int64_t groups, int64_t cin_g, int64_t cout_g) {
  ConvShape s = random_conv_transpose(rng);
  s.in_channels = groups * cin_g;
  s.out_channels = groups * cout_g;
  return s;
}

struct Packed {
  std::vector<std::vector<float>> phases;
  ConvTranspose2DWeights weights;
};

Packed pack(const ConvShape& s, int64_t groups, const std::vector<float>& w, int64_t panel) {
  Packed p;
  p.weights.phases_h = split_conv_transpose_axis(s.h);
  p.weights.phases_w = split_conv_transpose_axis(s.w);
  p.weights.panel_columns = panel;
  p.phases = pack_conv_transpose2d_grouped_weights(s, groups, p.weights.phases_h, p.weights.phases_w, w.data(), panel);
  for (auto& ph : p.phases) p.weights.sub_kernels.push_back(ph.empty() ? nullptr : ph.data());
  return p;
}

size_t weight_count(const ConvShape& s, int64_t groups) {
  return static_cast<size_t>(s.in_channels * (s.out_channels / groups) * s.h.kernel * s.w.kernel);
}

TEST(ConvTranspose2DGrouped, GroupsOneIsTheUngroupedOp) {
  std::mt19937 rng(3);
  const ConvShape s = random_grouped(rng, 1, 5, 6);
  const auto x = random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels));
  const auto w = random_floats(rng, weight_count(s, 1));
  std::vector<float> a(static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels)), b(a.size());
  conv_transpose2d_reference(s, x.data(), w.data(), a.data(), Epilogue{});
  conv_transpose2d_grouped_reference(s, 1, x.data(), w.data(), b.data(), Epilogue{});
  EXPECT_EQ(a, b);
}

TEST(ConvTranspose2DGrouped, SplitMatchesReferenceOnRandomGeometries) {
  std::mt19937 rng(81);
  for (int trial = 0; trial < 90; ++trial) {
    const int64_t groups = uniform_int(rng, 2, 4);
    // Narrow groups (the dot path: at most 4 outputs) and wide ones (GEMM tiles, several panels).
    const int64_t cout_g = trial % 3 == 0 ? uniform_int(rng, 1, 4) : uniform_int(rng, 5, 40);
    const ConvShape s = random_grouped(rng, groups, uniform_int(rng, 1, 9), cout_g);
    const auto x = random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels));
    const auto w = random_floats(rng, weight_count(s, groups));
    const auto bias = random_floats(rng, static_cast<size_t>(s.out_channels));
    Epilogue ep;
    ep.bias = uniform_int(rng, 0, 1) ? bias.data() : nullptr;
    std::vector<float> slopes;
    draw_epilogue_activation(rng, ep, slopes, s.out_channels);
    const size_t out_size = static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels);
    std::vector<float> ref(out_size);
    conv_transpose2d_grouped_reference(s, groups, x.data(), w.data(), ref.data(), ep);
    const Packed p = pack(s, groups, w, trial % 2 ? kWeightPanelColumns : 0);
    const auto views = conv_transpose2d_group_views(s, groups, p.weights);
    for (int threads : {1, 2}) {
      SCOPED_TRACE("trial " + std::to_string(trial) + " groups " + std::to_string(groups) + " threads " + std::to_string(threads));
      std::vector<float> y(out_size, NAN);
      const int64_t floats = conv_transpose2d_grouped_workspace(s, views, threads);
      std::vector<float> ws(static_cast<size_t>(floats), NAN);
      conv_transpose2d_grouped(s, views, x.data(), y.data(), ep, threads, ws.data(), floats);
      ASSERT_TRUE(all_finite(y));
      ASSERT_LE(max_abs_diff(y, ref), 1e-4f);
    }
    // fp16 weights: the same within half-precision rounding of the weights.
    std::vector<std::vector<uint16_t>> halves;
    ConvTranspose2DWeights h = p.weights;
    h.sub_kernels.clear();
    for (const auto& ph : p.phases) {
      std::vector<uint16_t> v(ph.size());
      for (size_t i = 0; i < ph.size(); ++i) v[i] = float_to_half(ph[i]);
      halves.push_back(std::move(v));
    }
    for (const auto& v : halves) h.sub_kernels_f16.push_back(v.empty() ? nullptr : v.data());
    std::vector<float> y16(out_size, NAN);
    conv_transpose2d_grouped(s, conv_transpose2d_group_views(s, groups, h), x.data(), y16.data(), ep, 2);
    ASSERT_TRUE(all_finite(y16));
    ASSERT_LE(max_abs_diff(y16, ref), 2e-2f);
  }
}

TEST(ConvTranspose2DGrouped, ReferenceBackwardMatchesFiniteDifferences) {
  std::mt19937 rng(82);
  for (int trial = 0; trial < 16; ++trial) {
    const int64_t groups = uniform_int(rng, 2, 3);
    const ConvShape s = random_grouped(rng, groups, uniform_int(rng, 1, 3), uniform_int(rng, 1, 3));
    auto x = random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels));
    auto w = random_floats(rng, weight_count(s, groups));
    auto b = random_floats(rng, static_cast<size_t>(s.out_channels));
    const auto g = random_floats(rng, static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels));
    auto forward = [&] {
      std::vector<float> y(g.size());
      conv_transpose2d_grouped_reference(s, groups, x.data(), w.data(), y.data(), Epilogue{b.data(), Activation::kNone, 0});
      return y;
    };
    std::vector<float> dx(x.size()), dw(w.size()), db(b.size());
    conv_transpose2d_grouped_backward_reference(s, groups, x.data(), w.data(), g.data(), dx.data(), dw.data(), db.data());
    for (size_t i = 0; i < x.size(); i += 1 + x.size() / 7) expect_close(finite_difference(x, i, g, forward), dx[i], "dx", i);
    for (size_t i = 0; i < w.size(); i += 1 + w.size() / 7) expect_close(finite_difference(w, i, g, forward), dw[i], "dw", i);
    for (size_t i = 0; i < b.size(); ++i) expect_close(finite_difference(b, i, g, forward), db[i], "db", i);
  }
}

TEST(ConvTranspose2DGrouped, BackwardKernelsMatchReferenceOnRandomGeometries) {
  std::mt19937 rng(83);
  for (int trial = 0; trial < 60; ++trial) {
    const int64_t groups = uniform_int(rng, 2, 4);
    const ConvShape s = random_grouped(rng, groups, uniform_int(rng, 1, 9), uniform_int(rng, 1, 20));
    const auto x = random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels));
    const auto w = random_floats(rng, weight_count(s, groups));
    const auto dy = random_floats(rng, static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels));
    std::vector<float> dx_ref(x.size()), dw_ref(w.size());
    conv_transpose2d_grouped_backward_reference(s, groups, x.data(), w.data(), dy.data(), dx_ref.data(), dw_ref.data(), nullptr);
    const int64_t panel = trial % 2 ? kWeightPanelColumns : 0;
    const Packed p = pack(s, groups, w, panel), p_dw = pack(s, groups, dw_ref, panel);
    const auto views = conv_transpose2d_group_views(s, groups, p.weights);
    for (int threads : {1, 2}) {
      SCOPED_TRACE("trial " + std::to_string(trial) + " groups " + std::to_string(groups) + " threads " + std::to_string(threads));
      std::vector<float> dx(x.size(), NAN);
      std::vector<std::vector<float>> dw(p.phases.size());
      std::vector<float*> d_sub;
      for (size_t i = 0; i < dw.size(); ++i) {
        dw[i].assign(p.phases[i].size(), NAN);
        d_sub.push_back(dw[i].empty() ? nullptr : dw[i].data());
      }
      std::vector<float*> group_d;
      const int64_t floats = conv_transpose2d_grouped_backward_workspace(s, views, threads);
      std::vector<float> ws(static_cast<size_t>(floats), NAN);
      conv_transpose2d_grouped_backward(s, views, x.data(), dy.data(), dx.data(), d_sub, group_d, threads, ws.data(), floats);
      ASSERT_TRUE(all_finite(dx));
      ASSERT_LE(max_abs_diff(dx, dx_ref), 1e-4f);
      for (size_t i = 0; i < dw.size(); ++i) {
        ASSERT_TRUE(all_finite(dw[i]));
        ASSERT_LE(max_abs_diff(dw[i], p_dw.phases[i]), 1e-4f) << "phase " << i;
      }
    }
  }
}

}  // namespace
}  // namespace edgegan::cpu
