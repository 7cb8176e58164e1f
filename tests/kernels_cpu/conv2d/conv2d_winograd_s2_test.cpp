// The 4x4 stride-2 Winograd form (F(2x2, 2x2) on the input's polyphase components)
// == the reference over random geometries: odd and even map sizes (ragged 2x2 blocks
// at the right and bottom edges), pads 0-3 on each side, channel counts across the
// 16-row GEMM groups, the 32-column slice panels, the 64-column blocks and the
// 256-window chunks, batch 1-3, every activation, residuals, fused input maps (reflect
// pads, nearest upsampling); 1 and 2 threads give the same floats.
#include <gtest/gtest.h>

#include "kernels_common/conv_geometry.h"
#include "kernels_cpu/conv2d/conv2d_winograd_s2.h"
#include "tests/kernels_cpu/conv2d/conv2d_random_case.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::uniform_int;

TEST(Conv2DWinogradS2, AppliesToFourByFourStrideTwoOnly) {
  ConvShape s;
  s.in_channels = s.out_channels = 32;
  s.h = {32, 4, 2, 1, 1, 1, 16};
  s.w = s.h;
  EXPECT_TRUE(conv2d_winograd_s2_applies(s, 1));
  EXPECT_TRUE(conv2d_winograd_s2_pays(s, 1));  // 64 windows
  EXPECT_FALSE(conv2d_winograd_s2_applies(s, 2));
  ConvShape stride1 = s;
  stride1.w.stride = 1;
  EXPECT_FALSE(conv2d_winograd_s2_applies(stride1, 1));
  ConvShape dilated = s;
  dilated.h.dilation = 2;
  EXPECT_FALSE(conv2d_winograd_s2_applies(dilated, 1));
  ConvShape three = s;
  three.w.kernel = 3;
  EXPECT_FALSE(conv2d_winograd_s2_applies(three, 1));
  // Applies, does not pay: a 16x16 map (16 windows), a 3-channel first layer.
  ConvShape small = s;
  small.h = small.w = {16, 4, 2, 1, 1, 1, 8};
  EXPECT_FALSE(conv2d_winograd_s2_pays(small, 1));
  ConvShape rgb = s;
  rgb.in_channels = 3;
  EXPECT_FALSE(conv2d_winograd_s2_pays(rgb, 1));
}

TEST(Conv2DWinogradS2, MatchesReferenceOnRandomGeometries) {
  std::mt19937 rng(4242);
  for (int trial = 0; trial < 160; ++trial) {
    ConvShape s;
    s.batch = uniform_int(rng, 1, 3);
    s.in_channels = trial % 4 == 0 ? uniform_int(rng, 1, 8) : uniform_int(rng, 9, 48);
    s.out_channels = trial % 5 == 0 ? uniform_int(rng, 65, 140) : uniform_int(rng, 1, 48);
    const bool mapped = trial % 3 == 1;
    // Maps up to 44 on a side: up to 484 windows per image, past one 256-window chunk.
    const RandomAxes axes = draw_random_axes(rng, s, mapped, 1, trial % 7 == 0 ? 44 : 17, [&](int, ConvAxis& a) {
      a.kernel = 4;
      a.stride = 2;
      a.dilation = 1;
      a.pad_begin = uniform_int(rng, 0, 3);
      a.pad_end = uniform_int(rng, 0, 3);
    });
    if (s.h.out < 1 || s.w.out < 1) continue;
    const Conv2DRandomCase c = make_conv2d_random_case(rng, s, mapped, axes);
    const std::vector<float> packed = c.packed_weights();
    std::vector<float> single;
    for (int threads : {1, 2}) {
      std::vector<float> y(c.ref.size(), NAN);
      std::vector<float> workspace(static_cast<size_t>(conv2d_winograd_s2_workspace(s, threads)), NAN);
      conv2d_winograd_s2(s, packed.data(), c.x.data(), y.data(), c.ep, threads, workspace.data(), c.input_map());
      // The transforms add up to 4 inputs and 4 weights before the products and 4
      // products after, over 4 phases: a few times the direct sum's rounding.
      const float tol = 2e-5f + 1e-6f * static_cast<float>(s.in_channels * 16);
      ASSERT_LE(worst_relative_error(y, c.ref), tol)
          << "trial " << trial << ": " << s.batch << "x" << s.h.in << "x" << s.w.in << "x" << s.in_channels << " -> " << s.out_channels << " pads "
          << s.h.pad_begin << "," << s.h.pad_end << "," << s.w.pad_begin << "," << s.w.pad_end << (mapped ? " mapped" : "") << " activation "
          << static_cast<int>(c.ep.activation) << (c.ep.residual ? " residual" : "") << ", threads " << threads;
      if (threads == 1) single = y;
      else ASSERT_EQ(y, single) << "trial " << trial << ": 2 threads differ from 1";
    }
  }
}

}  // namespace
}  // namespace edgegan::cpu
