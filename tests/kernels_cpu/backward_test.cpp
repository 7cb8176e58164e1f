// Backward kernels: the plain references against central finite differences
// (the ops are linear, so differences are exact up to rounding), and the fast
// kernels against the references over random geometries at 1 and 2 threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "kernels_cpu/conv2d/conv2d_trimmed.h"
#include "kernels_cpu/conv2d/conv2d_backward.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_split.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_backward.h"
#include "tests/test_util.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_reference.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_backward_zero_insert.h"
#include "kernels_cpu/conv2d/conv2d_reference.h"
#include "kernels_cpu/common/conv_geometry.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"

namespace edgegan::cpu {
namespace {

using testing::max_abs_diff;
using testing::random_floats;
using testing::uniform_int;

// sum(y * g) in double: the scalar loss whose gradient w.r.t. y is g.
double loss(const std::vector<float>& y, const std::vector<float>& g) {
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
bool all_finite(const std::vector<float>& v) {
  return std::all_of(v.begin(), v.end(), [](float f) { return std::isfinite(f); });
}

void expect_close(double numeric, double analytic, const char* what, size_t index) {
  EXPECT_NEAR(numeric, analytic, 2e-3 * (1.0 + std::abs(analytic))) << what << "[" << index << "]";
}

ConvShape random_conv_transpose(std::mt19937& rng) {
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

ConvShape random_conv(std::mt19937& rng) {
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

TEST(ConvTransposeBackward, ReferenceMatchesFiniteDifferences) {
  std::mt19937 rng(31);
  for (int trial = 0; trial < 25; ++trial) {
    const ConvShape s = random_conv_transpose(rng);
    auto x = random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels));
    auto w = random_floats(rng, static_cast<size_t>(s.in_channels * s.out_channels * s.h.kernel * s.w.kernel));
    auto b = random_floats(rng, static_cast<size_t>(s.out_channels));
    const auto g = random_floats(rng, static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels));
    auto forward = [&] {
      std::vector<float> y(g.size());
      conv_transpose2d_reference(s, x.data(), w.data(), y.data(), Epilogue{b.data(), Activation::kNone, 0});
      return y;
    };
    std::vector<float> dx(x.size()), dw(w.size()), db(b.size());
    conv_transpose2d_backward_reference(s, x.data(), w.data(), g.data(), dx.data(), dw.data(), db.data());
    for (size_t i = 0; i < x.size(); i += 1 + x.size() / 5) expect_close(finite_difference(x, i, g, forward), dx[i], "dx", i);
    for (size_t i = 0; i < w.size(); i += 1 + w.size() / 5) expect_close(finite_difference(w, i, g, forward), dw[i], "dw", i);
    for (size_t i = 0; i < b.size(); ++i) expect_close(finite_difference(b, i, g, forward), db[i], "db", i);
  }
}

TEST(ConvTransposeBackward, SplitKernelsMatchReferenceOnRandomGeometries) {
  std::mt19937 rng(32);
  for (int trial = 0; trial < 300; ++trial) {
    const ConvShape s = random_conv_transpose(rng);
    const auto x = random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels));
    const auto w = random_floats(rng, static_cast<size_t>(s.in_channels * s.out_channels * s.h.kernel * s.w.kernel));
    const auto dy = random_floats(rng, static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels));
    std::vector<float> dx_ref(x.size()), dw_ref(w.size());
    conv_transpose2d_backward_reference(s, x.data(), w.data(), dy.data(), dx_ref.data(), dw_ref.data(), nullptr);

    ConvTranspose2DWeights split;
    split.phases_h = split_conv_transpose_axis(s.h);
    split.phases_w = split_conv_transpose_axis(s.w);
    const auto packed = pack_conv_transpose2d_weights(s, split.phases_h, split.phases_w, w.data());
    for (const auto& p : packed) split.sub_kernels.push_back(p.empty() ? nullptr : p.data());
    const auto dw_ref_packed = pack_conv_transpose2d_weights(s, split.phases_h, split.phases_w, dw_ref.data());
    for (int threads : {1, 2}) {
      SCOPED_TRACE("trial " + std::to_string(trial) + ", threads " + std::to_string(threads));
      std::vector<float> dx(x.size(), NAN);
      std::vector<float> ws(static_cast<size_t>(conv_transpose2d_backward_input_workspace(s)), NAN);  // fully overwritten
      conv_transpose2d_backward_input(s, split, dy.data(), dx.data(), ws.data(), threads);
      ASSERT_TRUE(all_finite(dx));
      ASSERT_LE(max_abs_diff(dx, dx_ref), 1e-4f);
      std::vector<std::vector<float>> dw(packed.size());
      std::vector<float*> dw_ptr;
      for (size_t p = 0; p < packed.size(); ++p) {
        dw[p].assign(packed[p].size(), NAN);
        dw_ptr.push_back(dw[p].empty() ? nullptr : dw[p].data());
      }
      conv_transpose2d_backward_weights(s, split.phases_h, split.phases_w, x.data(), dy.data(), dw_ptr, threads);
      for (size_t p = 0; p < packed.size(); ++p) {
        ASSERT_TRUE(all_finite(dw[p])) << "phase " << p;
        ASSERT_LE(max_abs_diff(dw[p], dw_ref_packed[p]), 1e-4f) << "phase " << p;
      }
    }
  }
}

// The zero-insertion baseline (dX through the zero-dilated input's gradient, dW over
// the full kernel) against the plain loops, and the full kernel's gradient scattered
// back into the phases against the split kernel's phase gradients.
TEST(ConvTransposeBackward, ZeroInsertionKernelsMatchReferenceOnRandomGeometries) {
  std::mt19937 rng(35);
  for (int trial = 0; trial < 300; ++trial) {
    const ConvShape s = random_conv_transpose(rng);
    const auto x = random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels));
    const auto w = random_floats(rng, static_cast<size_t>(s.in_channels * s.out_channels * s.h.kernel * s.w.kernel));
    const auto dy = random_floats(rng, static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels));
    std::vector<float> dx_ref(x.size()), dw_ref(w.size());
    conv_transpose2d_backward_reference(s, x.data(), w.data(), dy.data(), dx_ref.data(), dw_ref.data(), nullptr);

    ConvTranspose2DWeights split;
    split.phases_h = split_conv_transpose_axis(s.h);
    split.phases_w = split_conv_transpose_axis(s.w);
    const auto packed = pack_conv_transpose2d_weights(s, split.phases_h, split.phases_w, w.data());
    for (const auto& p : packed) split.sub_kernels.push_back(p.empty() ? nullptr : p.data());
    const auto dw_ref_packed = pack_conv_transpose2d_weights(s, split.phases_h, split.phases_w, dw_ref.data());
    std::vector<float> full(w.size());
    assemble_conv_transpose2d_full_kernel(s, split, FullKernelLayout::kTapsFirst, full.data());
    // The reference dW in the full-kernel layout [kh][kw][Cin][Cout].
    std::vector<float> dw_ref_full(w.size());
    ConvTranspose2DWeights dw_split{split.phases_h, split.phases_w, {}, {}};
    for (const auto& p : dw_ref_packed) dw_split.sub_kernels.push_back(p.empty() ? nullptr : p.data());
    assemble_conv_transpose2d_full_kernel(s, dw_split, FullKernelLayout::kTapsFirst, dw_ref_full.data());

    for (int threads : {1, 2}) {
      SCOPED_TRACE("trial " + std::to_string(trial) + ", threads " + std::to_string(threads));
      std::vector<float> ws(static_cast<size_t>(conv_transpose2d_zero_insert_backward_input_workspace(s)), NAN);
      std::vector<float> dx(x.size(), NAN);
      conv_transpose2d_zero_insert_backward_input(s, full.data(), dy.data(), dx.data(), ws.data(), threads);
      ASSERT_TRUE(all_finite(dx));
      ASSERT_LE(max_abs_diff(dx, dx_ref), 1e-4f);
      ws.assign(static_cast<size_t>(conv_transpose2d_zero_insert_backward_weights_workspace(s)), NAN);
      std::vector<float> dw(w.size(), NAN);
      conv_transpose2d_zero_insert_backward_weights(s, x.data(), dy.data(), dw.data(), ws.data(), threads);
      ASSERT_TRUE(all_finite(dw));
      ASSERT_LE(max_abs_diff(dw, dw_ref_full), 1e-4f);

      std::vector<std::vector<float>> dsub(packed.size());
      std::vector<float*> dsub_ptr;
      for (size_t p = 0; p < packed.size(); ++p) {
        dsub[p].assign(packed[p].size(), NAN);
        dsub_ptr.push_back(dsub[p].empty() ? nullptr : dsub[p].data());
      }
      scatter_conv_transpose2d_full_kernel(s, split.phases_h, split.phases_w, dw.data(), dsub_ptr);
      for (size_t p = 0; p < packed.size(); ++p) {
        ASSERT_TRUE(all_finite(dsub[p])) << "phase " << p;
        ASSERT_LE(max_abs_diff(dsub[p], dw_ref_packed[p]), 1e-4f) << "phase " << p;
      }
    }
  }
}

// The geometries of GAN layers, larger than the random ones: stride 2 with k4 p1 and
// k5 p2 op1, stride 1 k4 p0 (the first layer), odd channel counts.
TEST(ConvTransposeBackward, ZeroInsertionAndSplitAgreeOnGanLayers) {
  std::mt19937 rng(36);
  struct Geometry { int64_t in, kernel, stride, pad, out_pad, cin, cout; };
  for (const Geometry& g : {Geometry{1, 4, 1, 0, 0, 13, 9}, Geometry{4, 4, 2, 1, 0, 17, 11}, Geometry{5, 5, 2, 2, 1, 9, 7},
                            Geometry{8, 4, 2, 1, 0, 8, 3}, Geometry{3, 3, 3, 1, 2, 5, 6}}) {
    ConvAxis a{g.in, g.kernel, g.stride, 1, g.pad, g.pad, 0};
    a.out = conv_transpose_output_length(a.in, a.kernel, a.stride, 1, g.pad, g.pad, g.out_pad);
    const ConvShape s{2, g.cin, g.cout, a, a};
    const auto x = random_floats(rng, static_cast<size_t>(s.batch * a.in * a.in * s.in_channels));
    const auto w = random_floats(rng, static_cast<size_t>(s.in_channels * s.out_channels * a.kernel * a.kernel));
    const auto dy = random_floats(rng, static_cast<size_t>(s.batch * a.out * a.out * s.out_channels));
    std::vector<float> dx_ref(x.size()), dw_ref(w.size());
    conv_transpose2d_backward_reference(s, x.data(), w.data(), dy.data(), dx_ref.data(), dw_ref.data(), nullptr);
    ConvTranspose2DWeights split;
    split.phases_h = split_conv_transpose_axis(s.h);
    split.phases_w = split_conv_transpose_axis(s.w);
    const auto packed = pack_conv_transpose2d_weights(s, split.phases_h, split.phases_w, w.data());
    for (const auto& p : packed) split.sub_kernels.push_back(p.empty() ? nullptr : p.data());
    const auto dw_ref_packed = pack_conv_transpose2d_weights(s, split.phases_h, split.phases_w, dw_ref.data());
    std::vector<float> full(w.size()), dw_full(w.size()), dx(x.size()), dx_split(x.size());
    assemble_conv_transpose2d_full_kernel(s, split, FullKernelLayout::kTapsFirst, full.data());
    std::vector<float> ws(static_cast<size_t>(std::max(conv_transpose2d_zero_insert_backward_input_workspace(s),
                                                       conv_transpose2d_zero_insert_backward_weights_workspace(s))));
    conv_transpose2d_zero_insert_backward_input(s, full.data(), dy.data(), dx.data(), ws.data(), 2);
    conv_transpose2d_zero_insert_backward_weights(s, x.data(), dy.data(), dw_full.data(), ws.data(), 2);
    std::vector<float> ws_split(static_cast<size_t>(conv_transpose2d_backward_input_workspace(s)));
    conv_transpose2d_backward_input(s, split, dy.data(), dx_split.data(), ws_split.data(), 2);
    EXPECT_LE(max_abs_diff(dx, dx_ref), 1e-4f);
    EXPECT_LE(max_abs_diff(dx_split, dx_ref), 1e-4f);
    std::vector<std::vector<float>> dsub(packed.size()), dsub_split(packed.size());
    std::vector<float*> ptr, ptr_split;
    for (size_t p = 0; p < packed.size(); ++p) {
      dsub[p].resize(packed[p].size());
      dsub_split[p].resize(packed[p].size());
      ptr.push_back(dsub[p].empty() ? nullptr : dsub[p].data());
      ptr_split.push_back(dsub_split[p].empty() ? nullptr : dsub_split[p].data());
    }
    scatter_conv_transpose2d_full_kernel(s, split.phases_h, split.phases_w, dw_full.data(), ptr);
    conv_transpose2d_backward_weights(s, split.phases_h, split.phases_w, x.data(), dy.data(), ptr_split, 2);
    for (size_t p = 0; p < packed.size(); ++p) {
      EXPECT_LE(max_abs_diff(dsub[p], dw_ref_packed[p]), 1e-3f) << "phase " << p;
      EXPECT_LE(max_abs_diff(dsub_split[p], dw_ref_packed[p]), 1e-3f) << "phase " << p;
    }
    // Both writers again, in column panels 4 wide (several per tap here), as a Trainer
    // on a converted model receives them.
    const auto dw_ref_panels = pack_conv_transpose2d_weights(s, split.phases_h, split.phases_w, dw_ref.data(), 4);
    scatter_conv_transpose2d_full_kernel(s, split.phases_h, split.phases_w, dw_full.data(), ptr, 4);
    conv_transpose2d_backward_weights(s, split.phases_h, split.phases_w, x.data(), dy.data(), ptr_split, 2, 4);
    for (size_t p = 0; p < packed.size(); ++p) {
      EXPECT_LE(max_abs_diff(dsub[p], dw_ref_panels[p]), 1e-3f) << "phase " << p << ", panels";
      EXPECT_LE(max_abs_diff(dsub_split[p], dw_ref_panels[p]), 1e-3f) << "phase " << p << ", panels";
    }
  }
}

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
TEST(BackwardWorkspaces, PlannedWorkspacesGiveTheSameBitsAsOwnScratch) {
  std::mt19937 rng(35);
  for (int trial = 0; trial < 120; ++trial) {
    for (int threads : {1, 2}) {
      SCOPED_TRACE("trial " + std::to_string(trial) + ", threads " + std::to_string(threads));
      // A convolution: forward, dW and dX.
      const ConvShape c = random_conv(rng);
      const auto x = random_floats(rng, static_cast<size_t>(c.batch * c.h.in * c.w.in * c.in_channels));
      const auto w = random_floats(rng, static_cast<size_t>(c.out_channels * c.in_channels * c.h.kernel * c.w.kernel));
      const auto dy = random_floats(rng, static_cast<size_t>(c.batch * c.h.out * c.w.out * c.out_channels));
      std::vector<float> y_own(dy.size()), y_ws(dy.size()), ws(static_cast<size_t>(conv2d_trimmed_workspace(c, threads)) + 1, NAN);
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

      // A transposed convolution: dW per phase and dX.
      const ConvShape d = random_conv_transpose(rng);
      ConvTranspose2DWeights split;
      split.phases_h = split_conv_transpose_axis(d.h);
      split.phases_w = split_conv_transpose_axis(d.w);
      const auto onnx = random_floats(rng, static_cast<size_t>(d.in_channels * d.out_channels * d.h.kernel * d.w.kernel));
      const auto packed = pack_conv_transpose2d_weights(d, split.phases_h, split.phases_w, onnx.data());
      for (const auto& p : packed) split.sub_kernels.push_back(p.empty() ? nullptr : p.data());
      const auto tx = random_floats(rng, static_cast<size_t>(d.batch * d.h.in * d.w.in * d.in_channels));
      const auto tdy = random_floats(rng, static_cast<size_t>(d.batch * d.h.out * d.w.out * d.out_channels));
      std::vector<std::vector<float>> dsub_own, dsub_ws;
      std::vector<float*> own_ptr, ws_ptr;
      for (const auto& p : packed) {
        dsub_own.emplace_back(p.size());
        dsub_ws.emplace_back(p.size());
      }
      for (size_t p = 0; p < packed.size(); ++p) {
        own_ptr.push_back(packed[p].empty() ? nullptr : dsub_own[p].data());
        ws_ptr.push_back(packed[p].empty() ? nullptr : dsub_ws[p].data());
      }
      ws.assign(static_cast<size_t>(conv_transpose2d_backward_weights_workspace(d, split.phases_h, split.phases_w, threads)), NAN);
      conv_transpose2d_backward_weights(d, split.phases_h, split.phases_w, tx.data(), tdy.data(), own_ptr, threads);
      conv_transpose2d_backward_weights(d, split.phases_h, split.phases_w, tx.data(), tdy.data(), ws_ptr, threads, 0, ws.data());
      ASSERT_EQ(dsub_own, dsub_ws);
      std::vector<float> tdx_own(tx.size()), tdx_ws(tx.size()), kernel(static_cast<size_t>(conv_transpose2d_backward_input_workspace(d)));
      conv_transpose2d_backward_input(d, split, tdy.data(), tdx_own.data(), kernel.data(), threads);
      ws.assign(static_cast<size_t>(conv_transpose2d_backward_input_workspace(d, threads)), NAN);
      conv_transpose2d_backward_input(d, split, tdy.data(), tdx_ws.data(), ws.data(), threads, static_cast<int64_t>(ws.size()));
      ASSERT_EQ(tdx_own, tdx_ws);
    }
  }
}

// Wider layers than the random geometries above take the kernels' other paths: one tap
// per weight-gradient task (32+ output channels), the phase GEMMs for dX of a conv (16+
// input channels), and panels that end mid-image.
TEST(BackwardKernels, WideChannelPathsMatchReference) {
  std::mt19937 rng(37);
  for (int trial = 0; trial < 40; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    ConvShape d = random_conv_transpose(rng);
    d.in_channels = uniform_int(rng, 16, 40);
    d.out_channels = uniform_int(rng, 30, 40);
    {
      const auto x = random_floats(rng, static_cast<size_t>(d.batch * d.h.in * d.w.in * d.in_channels));
      const auto w = random_floats(rng, static_cast<size_t>(d.in_channels * d.out_channels * d.h.kernel * d.w.kernel));
      const auto dy = random_floats(rng, static_cast<size_t>(d.batch * d.h.out * d.w.out * d.out_channels));
      std::vector<float> dx_ref(x.size()), dw_ref(w.size()), dx(x.size(), NAN);
      conv_transpose2d_backward_reference(d, x.data(), w.data(), dy.data(), dx_ref.data(), dw_ref.data(), nullptr);
      ConvTranspose2DWeights split;
      split.phases_h = split_conv_transpose_axis(d.h);
      split.phases_w = split_conv_transpose_axis(d.w);
      const auto packed = pack_conv_transpose2d_weights(d, split.phases_h, split.phases_w, w.data());
      for (const auto& p : packed) split.sub_kernels.push_back(p.empty() ? nullptr : p.data());
      const auto dw_ref_packed = pack_conv_transpose2d_weights(d, split.phases_h, split.phases_w, dw_ref.data());
      std::vector<float> ws(static_cast<size_t>(conv_transpose2d_backward_input_workspace(d)), NAN);
      conv_transpose2d_backward_input(d, split, dy.data(), dx.data(), ws.data(), 2);
      ASSERT_TRUE(all_finite(dx));
      ASSERT_LE(max_abs_diff(dx, dx_ref), 1e-3f);
      std::vector<std::vector<float>> dw(packed.size());
      std::vector<float*> dw_ptr;
      for (size_t p = 0; p < packed.size(); ++p) {
        dw[p].assign(packed[p].size(), NAN);
        dw_ptr.push_back(dw[p].empty() ? nullptr : dw[p].data());
      }
      conv_transpose2d_backward_weights(d, split.phases_h, split.phases_w, x.data(), dy.data(), dw_ptr, 2);
      for (size_t p = 0; p < packed.size(); ++p) {
        ASSERT_TRUE(all_finite(dw[p])) << "phase " << p;
        ASSERT_LE(max_abs_diff(dw[p], dw_ref_packed[p]), 1e-3f) << "phase " << p;
      }
    }
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
