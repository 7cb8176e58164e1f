// The narrow-output path (conv2d_narrow: at most 4 output channels on the dot kernels)
// == the reference over random geometries: kernels 1-9 per axis, strides 1-3, dilated
// rows, asymmetric pads wider than the kernel's reach, fused input maps (reflect pads,
// nearest upsampling), every activation, residuals, batch 2; and the same bits at 1
// and 2 threads.
#include <gtest/gtest.h>

#include "kernels_cpu/common/conv_geometry.h"
#include "kernels_cpu/conv2d/conv2d_input_map.h"
#include "kernels_cpu/conv2d/conv2d_narrow.h"
#include "kernels_cpu/conv2d/conv2d_reference.h"
#include "kernels_cpu/dot/dot_ukernel.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

ConvShape head(int64_t cin, int64_t cout, int64_t kernel) {
  ConvShape s;
  s.in_channels = cin;
  s.out_channels = cout;
  s.h = {64, kernel, 1, 1, kernel / 2, kernel / 2, 64};
  s.w = s.h;
  return s;
}

TEST(Conv2DNarrow, AppliesToHeadsOfAtMostFourOutputs) {
  if (!dot_ukernel().run) GTEST_SKIP() << "the active ISA family has no dot kernels";
  EXPECT_TRUE(conv2d_narrow_applies(head(32, 3, 9), 1));   // the fast-style head
  EXPECT_TRUE(conv2d_narrow_applies(head(64, 3, 7), 1));   // CycleGAN's
  EXPECT_TRUE(conv2d_narrow_applies(head(64, 1, 3), 1));
  EXPECT_FALSE(conv2d_narrow_applies(head(64, 5, 3), 1));  // a GEMM tile's width pays
  EXPECT_FALSE(conv2d_narrow_applies(head(64, 3, 3), 2));  // grouped
  EXPECT_FALSE(conv2d_narrow_applies(head(3, 3, 3), 1));   // 9 deep: mostly reductions
  ConvShape dilated = head(32, 3, 3);
  dilated.w.dilation = 2;
  EXPECT_FALSE(conv2d_narrow_applies(dilated, 1));
}

TEST(Conv2DNarrow, MatchesReferenceOnRandomGeometries) {
  if (!dot_ukernel().run) GTEST_SKIP() << "the active ISA family has no dot kernels";
  std::mt19937 rng(77);
  int checked = 0;
  for (int trial = 0; trial < 200; ++trial) {
    ConvShape s;
    s.batch = uniform_int(rng, 1, 2);
    s.out_channels = uniform_int(rng, 1, 4);
    const bool mapped = trial % 3 == 1;
    InputMapAxis map_h, map_w;
    int64_t src_h = 0, src_w = 0;
    for (int axis = 0; axis < 2; ++axis) {
      ConvAxis& a = axis == 0 ? s.h : s.w;
      InputMapAxis& m = axis == 0 ? map_h : map_w;
      int64_t& src = axis == 0 ? src_h : src_w;
      src = uniform_int(rng, 2, 23);
      if (mapped) {
        m.factor = uniform_int(rng, 1, 2);
        m.pad_begin = uniform_int(rng, 0, 1);
        m.pad_end = uniform_int(rng, 0, 1);
      }
      a.in = m.length(src);
      a.kernel = uniform_int(rng, 1, 9);
      a.stride = uniform_int(rng, 0, 3) == 0 ? uniform_int(rng, 2, 3) : 1;
      a.dilation = axis == 0 && uniform_int(rng, 0, 3) == 0 ? 2 : 1;
      a.pad_begin = uniform_int(rng, 0, 5);
      a.pad_end = uniform_int(rng, 0, 5);
      a.out = conv_output_length(a.in, a.kernel, a.stride, a.dilation, a.pad_begin, a.pad_end);
    }
    s.in_channels = uniform_int(rng, (32 + s.w.kernel - 1) / s.w.kernel, 70);
    if (s.h.out < 1 || s.w.out < 1) continue;
    ASSERT_TRUE(conv2d_narrow_applies(s, 1)) << "trial " << trial;
    const auto x = random_floats(rng, static_cast<size_t>(s.batch * src_h * src_w * s.in_channels));
    const auto w = random_floats(rng, static_cast<size_t>(s.out_channels * s.in_channels * s.h.kernel * s.w.kernel));
    const auto bias = random_floats(rng, static_cast<size_t>(s.out_channels));
    const size_t out_size = static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels);
    const auto residual = random_floats(rng, out_size);
    Epilogue ep;
    ep.bias = uniform_int(rng, 0, 1) ? bias.data() : nullptr;
    ep.activation = static_cast<Activation>(uniform_int(rng, 0, kActivationCount - 1));
    ep.alpha = ep.activation == Activation::kClip ? -0.5f : 0.2f;
    ep.beta = ep.activation == Activation::kClip ? 0.5f : ep.activation == Activation::kSelu ? 1.0507f : 0.5f;
    if (ep.activation == Activation::kNone && uniform_int(rng, 0, 1)) ep.residual = residual.data();

    std::vector<int32_t> rows(static_cast<size_t>(s.h.in)), cols(static_cast<size_t>(s.w.in));
    ConvInputMap map{};
    std::vector<float> seen = x;
    if (mapped) {
      conv_input_map_table(src_h, map_h, PadMode::kReflect, rows.data());
      conv_input_map_table(src_w, map_w, PadMode::kReflect, cols.data());
      map = {rows.data(), cols.data(), src_h, src_w};
      seen.assign(static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels), 0.f);
      conv_input_map_gather(s.batch, s.h.in, s.w.in, s.in_channels, map, x.data(), seen.data(), 1);
    }
    std::vector<float> ref(out_size), packed(w.size());
    Epilogue ref_ep = ep;
    ref_ep.residual = nullptr;
    conv2d_reference(s, seen.data(), w.data(), ref.data(), ref_ep);
    if (ep.residual)
      for (size_t i = 0; i < out_size; ++i) ref[i] += residual[i];
    pack_conv2d_weights(s, w.data(), packed.data());
    std::vector<float> first;
    for (int threads : {1, 2}) {
      std::vector<float> y(out_size, NAN), workspace(static_cast<size_t>(conv2d_narrow_workspace(s, threads)), NAN);
      conv2d_narrow(s, packed.data(), x.data(), y.data(), ep, threads, workspace.data(), mapped ? &map : nullptr);
      const float tol = 1e-5f + 1e-6f * static_cast<float>(s.in_channels * s.h.kernel * s.w.kernel);
      float worst = 0.f;
      for (size_t i = 0; i < out_size; ++i) worst = std::max(worst, std::abs(y[i] - ref[i]) / std::max(1.f, std::abs(ref[i])));
      ASSERT_LE(worst, tol) << "trial " << trial << ": " << s.batch << "x" << s.h.in << "x" << s.w.in << "x" << s.in_channels << " -> "
                            << s.out_channels << " k" << s.h.kernel << "x" << s.w.kernel << " s" << s.h.stride << "," << s.w.stride
                            << " d" << s.h.dilation << " pads " << s.h.pad_begin << "," << s.h.pad_end << "," << s.w.pad_begin << ","
                            << s.w.pad_end << (mapped ? " mapped" : "") << " activation " << static_cast<int>(ep.activation)
                            << (ep.residual ? " residual" : "") << ", " << threads << " threads";
      if (threads == 1) first = y;
      else EXPECT_EQ(y, first) << "trial " << trial << ": 2 threads differ from 1";
    }
    ++checked;
  }
  EXPECT_GT(checked, 150);
}

}  // namespace
}  // namespace edgegan::cpu
