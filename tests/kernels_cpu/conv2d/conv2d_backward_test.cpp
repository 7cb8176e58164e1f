// Convolution backward: the plain reference against central finite differences, and
// the split (dX) and leaping (dW) kernels against the reference over random geometries.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels_cpu/conv2d/conv2d_backward.h"
#include "kernels_cpu/conv2d/conv2d_reference.h"
#include "kernels_cpu/conv2d/conv2d_trimmed.h"
#include "tests/kernels_cpu/backward_test_util.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using testing::max_abs_diff;
using testing::random_floats;
using testing::uniform_int;

TEST(Conv2DBackward, ReferenceMatchesFiniteDifferences) {
  std::mt19937 rng(33);
  for (int trial = 0; trial < 25; ++trial) {
    const ConvShape s = random_conv(rng);
    auto x = random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels));
    auto w = random_floats(rng, static_cast<size_t>(s.out_channels * s.in_channels * s.h.kernel * s.w.kernel));
    auto b = random_floats(rng, static_cast<size_t>(s.out_channels));
    const auto g = random_floats(rng, static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels));
    auto forward = [&] {
      std::vector<float> y(g.size());
      conv2d_reference(s, x.data(), w.data(), y.data(), Epilogue{b.data(), Activation::kNone, 0});
      return y;
    };
    std::vector<float> dx(x.size()), dw(w.size()), db(b.size());
    conv2d_backward_reference(s, x.data(), w.data(), g.data(), dx.data(), dw.data(), db.data());
    for (size_t i = 0; i < x.size(); i += 1 + x.size() / 5) expect_close(finite_difference(x, i, g, forward), dx[i], "dx", i);
    for (size_t i = 0; i < w.size(); i += 1 + w.size() / 5) expect_close(finite_difference(w, i, g, forward), dw[i], "dw", i);
    for (size_t i = 0; i < b.size(); ++i) expect_close(finite_difference(b, i, g, forward), db[i], "db", i);
  }
}

TEST(Conv2DBackward, SplitAndLeapingKernelsMatchReferenceOnRandomGeometries) {
  std::mt19937 rng(34);
  for (int trial = 0; trial < 300; ++trial) {
    const ConvShape s = random_conv(rng);
    const auto x = random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels));
    const auto w = random_floats(rng, static_cast<size_t>(s.out_channels * s.in_channels * s.h.kernel * s.w.kernel));
    const auto dy = random_floats(rng, static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels));
    std::vector<float> dx_ref(x.size()), dw_ref(w.size()), packed(w.size()), dw_ref_packed(w.size());
    conv2d_backward_reference(s, x.data(), w.data(), dy.data(), dx_ref.data(), dw_ref.data(), nullptr);
    pack_conv2d_weights(s, w.data(), packed.data());
    pack_conv2d_weights(s, dw_ref.data(), dw_ref_packed.data());
    std::vector<float> plan_storage(static_cast<size_t>(conv2d_backward_input_workspace(s)));
    const ConvInputGradient plan = make_conv2d_input_gradient(s, packed.data(), plan_storage.data());
    for (int threads : {1, 2}) {
      SCOPED_TRACE("trial " + std::to_string(trial) + ", threads " + std::to_string(threads));
      std::vector<float> dx(x.size(), NAN), dw(w.size(), NAN);
      conv2d_backward_input(plan, dy.data(), dx.data(), threads);
      ASSERT_TRUE(all_finite(dx));
      ASSERT_LE(max_abs_diff(dx, dx_ref), 1e-4f);
      std::fill(dx.begin(), dx.end(), NAN);
      std::vector<float> ws(static_cast<size_t>(conv2d_backward_input_workspace(s)), NAN);  // fully overwritten
      conv2d_backward_input(s, packed.data(), dy.data(), dx.data(), ws.data(), threads);  // the view rebuilt per call
      ASSERT_TRUE(all_finite(dx));
      ASSERT_LE(max_abs_diff(dx, dx_ref), 1e-4f);
      conv2d_backward_weights(s, x.data(), dy.data(), dw.data(), threads);
      ASSERT_TRUE(all_finite(dw));
      ASSERT_LE(max_abs_diff(dw, dw_ref_packed), 1e-4f);
    }
  }
}

// With the workspaces the engine plans (NaN-filled: every float read is written first),
// the kernels allocate nothing and give the same bits as with scratch of their own.

// With the workspaces the engine plans (NaN-filled: every float read is written first),
// the kernels allocate nothing and give the same bits as with scratch of their own.
TEST(Conv2DBackward, PlannedWorkspacesGiveTheSameBitsAsOwnScratch) {
  std::mt19937 rng(36);
  for (int trial = 0; trial < 120; ++trial) {
    for (int threads : {1, 2}) {
      SCOPED_TRACE("trial " + std::to_string(trial) + ", threads " + std::to_string(threads));
      std::vector<float> ws;
      // A convolution: forward, dW and dX.
      const ConvShape c = random_conv(rng);
      const auto x = random_floats(rng, static_cast<size_t>(c.batch * c.h.in * c.w.in * c.in_channels));
      const auto w = random_floats(rng, static_cast<size_t>(c.out_channels * c.in_channels * c.h.kernel * c.w.kernel));
      const auto dy = random_floats(rng, static_cast<size_t>(c.batch * c.h.out * c.w.out * c.out_channels));
      std::vector<float> y_own(dy.size()), y_ws(dy.size());
      ws.assign(static_cast<size_t>(conv2d_trimmed_workspace(c, threads)) + 1, NAN);
      conv2d_trimmed(c, w.data(), x.data(), y_own.data(), Epilogue{}, threads);
      conv2d_trimmed(c, w.data(), x.data(), y_ws.data(), Epilogue{}, threads, ws.data());
      ASSERT_EQ(y_own, y_ws);
      std::vector<float> dw_own(w.size()), dw_ws(w.size());
      ws.assign(static_cast<size_t>(conv2d_backward_weights_workspace(c, threads)), NAN);
      conv2d_backward_weights(c, x.data(), dy.data(), dw_own.data(), threads);
      conv2d_backward_weights(c, x.data(), dy.data(), dw_ws.data(), threads, ws.data());
      ASSERT_EQ(dw_own, dw_ws);
      std::vector<float> dx_own(x.size()), dx_ws(x.size()), taps(static_cast<size_t>(conv2d_backward_input_workspace(c)));
      conv2d_backward_input(c, w.data(), dy.data(), dx_own.data(), taps.data(), threads);
      ConvInputGradient view = plan_conv2d_input_gradient(c);
      ws.assign(static_cast<size_t>(conv2d_backward_input_workspace(c, threads)), NAN);
      conv2d_backward_input(view, w.data(), dy.data(), dx_ws.data(), ws.data(), static_cast<int64_t>(ws.size()), threads);
      ASSERT_EQ(dx_own, dx_ws);
    }
  }
}

TEST(Conv2DBackward, WideChannelPathsMatchReference) {
  std::mt19937 rng(38);
  for (int trial = 0; trial < 40; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    ConvShape c = random_conv(rng);
    c.in_channels = uniform_int(rng, 16, 40);
    c.out_channels = uniform_int(rng, 16, 40);
    {
      const auto x = random_floats(rng, static_cast<size_t>(c.batch * c.h.in * c.w.in * c.in_channels));
      const auto w = random_floats(rng, static_cast<size_t>(c.out_channels * c.in_channels * c.h.kernel * c.w.kernel));
      const auto dy = random_floats(rng, static_cast<size_t>(c.batch * c.h.out * c.w.out * c.out_channels));
      std::vector<float> dx_ref(x.size()), dw_ref(w.size()), packed(w.size()), dw_ref_packed(w.size());
      conv2d_backward_reference(c, x.data(), w.data(), dy.data(), dx_ref.data(), dw_ref.data(), nullptr);
      pack_conv2d_weights(c, w.data(), packed.data());
      pack_conv2d_weights(c, dw_ref.data(), dw_ref_packed.data());
      std::vector<float> dx(x.size(), NAN), dw(w.size(), NAN);
      std::vector<float> ws(static_cast<size_t>(conv2d_backward_input_workspace(c)), NAN);
      conv2d_backward_input(c, packed.data(), dy.data(), dx.data(), ws.data(), 2);
      ASSERT_TRUE(all_finite(dx));
      ASSERT_LE(max_abs_diff(dx, dx_ref), 1e-3f);
      conv2d_backward_weights(c, x.data(), dy.data(), dw.data(), 2);
      ASSERT_TRUE(all_finite(dw));
      ASSERT_LE(max_abs_diff(dw, dw_ref_packed), 1e-3f);
    }
  }
}

}  // namespace
}  // namespace edgegan::cpu
