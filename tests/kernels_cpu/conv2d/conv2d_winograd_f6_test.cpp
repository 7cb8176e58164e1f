// Winograd F(6x6, 3x3) == the reference over random 3x3 stride-1 geometries: ragged
// 6x6 blocks at the right and bottom edges, asymmetric pads, channel counts across the
// 16-lane transforms and the 32-column filter slices, chunks of windows (large maps at
// batch 3, and input channels deep enough that a chunk holds a few dozen windows),
// every activation, residuals, fused input maps (reflect pads, nearest upsampling); 1
// and 2 threads give the same floats.
#include <gtest/gtest.h>

#include "kernels_common/conv_geometry.h"
#include "kernels_cpu/conv2d/conv2d_winograd.h"
#include "kernels_cpu/conv2d/conv2d_winograd_f6.h"
#include "tests/kernels_cpu/conv2d/conv2d_random_case.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::uniform_int;

ConvShape same_3x3(int64_t size, int64_t cin, int64_t cout) {
  ConvShape s;
  s.in_channels = cin;
  s.out_channels = cout;
  s.h = {size, 3, 1, 1, 1, 1, size};
  s.w = s.h;
  return s;
}

// It takes the layers whose F(4x4, 3x3) filters are not kept, with windows enough.
TEST(Conv2DWinogradF6, PaysForWideLayersOnLargeMaps) {
  EXPECT_TRUE(conv2d_winograd_f6_pays(same_3x3(64, 256, 256), 1));   // CycleGAN's residual blocks: 121 windows
  EXPECT_TRUE(conv2d_winograd_f6_pays(same_3x3(64, 256, 128), 1));
  EXPECT_FALSE(conv2d_winograd_f6_pays(same_3x3(64, 256, 256), 2));  // grouped
  EXPECT_FALSE(conv2d_winograd_f6_pays(same_3x3(64, 128, 128), 1)); // F(4x4, 3x3) keeps its 2.25 MiB of filters
  EXPECT_TRUE(conv2d_winograd_f6_pays(same_3x3(16, 256, 256), 1));  // 9 windows
  EXPECT_FALSE(conv2d_winograd_f6_pays(same_3x3(8, 512, 512), 1));  // 4 windows
  ConvShape strided = same_3x3(64, 256, 256);
  strided.w.stride = 2;
  EXPECT_FALSE(conv2d_winograd_f6_pays(strided, 1));
}

TEST(Conv2DWinogradF6, MatchesReferenceOnRandomGeometries) {
  std::mt19937 rng(6363);
  for (int trial = 0; trial < 120; ++trial) {
    ConvShape s;
    const bool large_map = trial % 7 == 0, deep = trial % 11 == 5;
    s.batch = large_map ? 3 : uniform_int(rng, 1, 2);
    s.in_channels = deep ? uniform_int(rng, 520, 700) : trial % 4 == 0 ? uniform_int(rng, 1, 8) : uniform_int(rng, 9, 80);
    s.out_channels = deep ? uniform_int(rng, 1, 20) : trial % 5 == 0 ? uniform_int(rng, 65, 140) : uniform_int(rng, 1, 48);
    const bool mapped = trial % 3 == 1;
    // Large maps at batch 3: past one 256-window chunk. Deep inputs: chunks of 46-63 windows.
    const int64_t src_hi = large_map ? 60 : deep ? 40 : 25;
    const RandomAxes axes = draw_random_axes(rng, s, mapped, 1, src_hi, [&](int, ConvAxis& a) {
      a.kernel = 3;
      a.stride = 1;
      a.dilation = 1;
      a.pad_begin = uniform_int(rng, 0, 2);
      a.pad_end = uniform_int(rng, 0, 2);
    });
    if (s.h.out < 1 || s.w.out < 1) continue;
    const Conv2DRandomCase c = make_conv2d_random_case(rng, s, mapped, axes);
    const std::vector<float> packed = c.packed_weights();
    std::vector<float> single;
    for (int threads : {1, 2}) {
      std::vector<float> y(c.ref.size(), NAN);
      std::vector<float> workspace(static_cast<size_t>(conv2d_winograd_f6_workspace(s, threads)), NAN);
      conv2d_winograd_f6(s, packed.data(), c.x.data(), y.data(), c.ep, threads, workspace.data(), c.input_map());
      // The transforms' coefficients (up to 32 and 21/4) add rounding that grows with the depth.
      const float tol = 3e-5f + 2e-6f * static_cast<float>(s.in_channels * 9);
      const float err = worst_relative_error(y, c.ref);
      ASSERT_LE(err, tol) << "trial " << trial << ": " << s.batch << "x" << s.h.in << "x" << s.w.in << "x" << s.in_channels << " -> "
                          << s.out_channels << " pads " << s.h.pad_begin << "," << s.h.pad_end << "," << s.w.pad_begin << "," << s.w.pad_end
                          << (mapped ? " mapped" : "") << " activation " << static_cast<int>(c.ep.activation)
                          << (c.ep.residual ? " residual" : "") << ", threads " << threads;
      if (threads == 1) single = y;
      else ASSERT_EQ(y, single) << "trial " << trial << ": 2 threads differ from 1";
    }
  }
}

}  // namespace
}  // namespace edgegan::cpu
