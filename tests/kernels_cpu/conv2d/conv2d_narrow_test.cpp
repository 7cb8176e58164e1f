// The narrow-output path (conv2d_narrow: at most 4 output channels on the dot kernels)
// == the reference over random geometries: kernels 1-9 per axis, strides 1-3, dilated
// rows, asymmetric pads wider than the kernel's reach, fused input maps (reflect pads,
// nearest upsampling), every activation, residuals, batch 2; and the same bits at 1
// and 2 threads.
#include <gtest/gtest.h>

#include "kernels_common/conv_geometry.h"
#include "kernels_cpu/conv2d/conv2d_narrow.h"
#include "kernels_cpu/dot/dot_ukernel.h"
#include "tests/kernels_cpu/conv2d/conv2d_random_case.h"
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
    const RandomAxes axes = draw_random_axes(rng, s, mapped, 2, 23, [&](int axis, ConvAxis& a) {
      a.kernel = uniform_int(rng, 1, 9);
      a.stride = uniform_int(rng, 0, 3) == 0 ? uniform_int(rng, 2, 3) : 1;
      a.dilation = axis == 0 && uniform_int(rng, 0, 3) == 0 ? 2 : 1;
      a.pad_begin = uniform_int(rng, 0, 5);
      a.pad_end = uniform_int(rng, 0, 5);
    });
    s.in_channels = uniform_int(rng, (32 + s.w.kernel - 1) / s.w.kernel, 70);
    if (s.h.out < 1 || s.w.out < 1) continue;
    ASSERT_TRUE(conv2d_narrow_applies(s, 1)) << "trial " << trial;
    const Conv2DRandomCase c = make_conv2d_random_case(rng, s, mapped, axes);
    const std::vector<float> packed = c.packed_weights();
    std::vector<float> first;
    for (int threads : {1, 2}) {
      std::vector<float> y(c.ref.size(), NAN), workspace(static_cast<size_t>(conv2d_narrow_workspace(s, threads)), NAN);
      conv2d_narrow(s, packed.data(), c.x.data(), y.data(), c.ep, threads, workspace.data(), c.input_map());
      const float tol = 1e-5f + 1e-6f * static_cast<float>(s.in_channels * s.h.kernel * s.w.kernel);
      ASSERT_LE(worst_relative_error(y, c.ref), tol) << "trial " << trial << ": " << s.batch << "x" << s.h.in << "x" << s.w.in << "x" << s.in_channels << " -> "
                            << s.out_channels << " k" << s.h.kernel << "x" << s.w.kernel << " s" << s.h.stride << "," << s.w.stride
                            << " d" << s.h.dilation << " pads " << s.h.pad_begin << "," << s.h.pad_end << "," << s.w.pad_begin << ","
                            << s.w.pad_end << (mapped ? " mapped" : "") << " activation " << static_cast<int>(c.ep.activation)
                            << (c.ep.residual ? " residual" : "") << ", " << threads << " threads";
      if (threads == 1) first = y;
      else EXPECT_EQ(y, first) << "trial " << trial << ": 2 threads differ from 1";
    }
    ++checked;
  }
  EXPECT_GT(checked, 150);
}

}  // namespace
}  // namespace edgegan::cpu
