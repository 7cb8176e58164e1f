// Winograd F(4x4, 3x3) == the reference over random 3x3 stride-1 geometries: ragged
// 4x4 blocks at the right and bottom edges, asymmetric pads, channel counts across the
// 16-lane transforms and the 64-column blocks, every inlined and non-inlined
// activation, residuals, fused input maps (reflect pads, nearest upsampling), 1 and 2
// threads.
#include <gtest/gtest.h>

#include "kernels_common/conv_geometry.h"
#include "kernels_cpu/conv2d/conv2d_winograd.h"
#include "tests/kernels_cpu/conv2d/conv2d_random_case.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

TEST(Conv2DWinograd, AppliesToThreeByThreeStrideOneOnly) {
  ConvShape s;
  s.in_channels = s.out_channels = 32;
  s.h = {16, 3, 1, 1, 1, 1, 16};
  s.w = s.h;
  EXPECT_TRUE(conv2d_winograd_applies(s, 1));
  EXPECT_FALSE(conv2d_winograd_applies(s, 2));
  ConvShape strided = s;
  strided.w.stride = 2;
  EXPECT_FALSE(conv2d_winograd_applies(strided, 1));
  ConvShape dilated = s;
  dilated.h.dilation = 2;
  EXPECT_FALSE(conv2d_winograd_applies(dilated, 1));
  ConvShape five = s;
  five.h.kernel = 5;
  EXPECT_FALSE(conv2d_winograd_applies(five, 1));
}

// The filter transform runs in every call for wide layers, on the session's threads:
// the same bits at 1 and 2 threads, ragged lane blocks included.
TEST(Conv2DWinograd, FilterTransformIsTheSameAtAnyThreadCount) {
  std::mt19937 rng(9);
  for (int64_t channels : {1, 17, 45, 150}) {
    ConvShape s;
    s.in_channels = channels;
    s.out_channels = channels + 3;
    const auto w = random_floats(rng, static_cast<size_t>(9 * s.in_channels * s.out_channels));
    std::vector<float> one(static_cast<size_t>(conv2d_winograd_weight_floats(s)), NAN), two(one.size(), NAN);
    pack_conv2d_winograd_weights(s, w.data(), one.data(), 1);
    pack_conv2d_winograd_weights(s, w.data(), two.data(), 2);
    EXPECT_EQ(one, two) << channels << " channels";
  }
}

TEST(Conv2DWinograd, MatchesReferenceOnRandomGeometries) {
  std::mt19937 rng(2024);
  for (int trial = 0; trial < 160; ++trial) {
    ConvShape s;
    s.batch = uniform_int(rng, 1, 2);
    s.in_channels = trial % 4 == 0 ? uniform_int(rng, 1, 8) : uniform_int(rng, 9, 80);
    s.out_channels = trial % 5 == 0 ? uniform_int(rng, 65, 140) : uniform_int(rng, 1, 48);
    // An input map on some trials: the convolution sees the mapped size.
    const bool mapped = trial % 3 == 1;
    const RandomAxes axes = draw_random_axes(rng, s, mapped, 1, 19, [&](int, ConvAxis& a) {
      a.kernel = 3;
      a.stride = 1;
      a.dilation = 1;
      a.pad_begin = uniform_int(rng, 0, 2);
      a.pad_end = uniform_int(rng, 0, 2);
    });
    if (s.h.out < 1 || s.w.out < 1) continue;
    const Conv2DRandomCase c = make_conv2d_random_case(rng, s, mapped, axes);
    const std::vector<float> packed = c.packed_weights();
    std::vector<float> y(c.ref.size(), NAN);
    std::vector<float> transformed(static_cast<size_t>(conv2d_winograd_weight_floats(s)));
    pack_conv2d_winograd_weights(s, packed.data(), transformed.data());
    const int threads = uniform_int(rng, 1, 2);
    std::vector<float> workspace(static_cast<size_t>(conv2d_winograd_workspace(s, threads)));
    conv2d_winograd(s, transformed.data(), c.x.data(), y.data(), c.ep, threads, workspace.data(), c.input_map());
    // The transforms' coefficients (up to 8 and 5) add rounding that grows with the depth.
    const float tol = 2e-5f + 2e-6f * static_cast<float>(s.in_channels * 9);
    ASSERT_LE(worst_relative_error(y, c.ref), tol) << "trial " << trial << ": " << s.batch << "x" << s.h.in << "x" << s.w.in << "x" << s.in_channels << " -> "
                          << s.out_channels << " pads " << s.h.pad_begin << "," << s.h.pad_end << "," << s.w.pad_begin << "," << s.w.pad_end
                          << (mapped ? " mapped" : "") << " activation " << static_cast<int>(c.ep.activation) << (c.ep.residual ? " residual" : "");
  }
}

}  // namespace
}  // namespace edgegan::cpu
