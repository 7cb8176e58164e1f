// Transposed-convolution backward: the plain reference against central finite
// differences (the op is linear, so differences are exact up to rounding), and the
// split and zero-insertion kernels against the reference over random geometries.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels_cpu/conv_transpose2d/conv_transpose2d_backward.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_backward_zero_insert.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_reference.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_split.h"
#include "tests/kernels_cpu/backward_test_util.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using testing::max_abs_diff;
using testing::random_floats;
using testing::uniform_int;

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


// With the workspaces the engine plans (NaN-filled: every float read is written first),
// the kernels allocate nothing and give the same bits as with scratch of their own.
TEST(ConvTransposeBackward, PlannedWorkspacesGiveTheSameBitsAsOwnScratch) {
  std::mt19937 rng(35);
  for (int trial = 0; trial < 120; ++trial) {
    for (int threads : {1, 2}) {
      SCOPED_TRACE("trial " + std::to_string(trial) + ", threads " + std::to_string(threads));
      std::vector<float> ws;
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

TEST(ConvTransposeBackward, WideChannelPathsMatchReference) {
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
  }
}

}  // namespace
}  // namespace edgegan::cpu
