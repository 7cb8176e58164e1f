// The thin path (conv2d_thin: 1-4 input channels to 8-64 outputs, or up to 64 to 8-16,
// stride 1, output pixels in the vector lanes) == the reference over random geometries: kernels
// 3-9 per axis, asymmetric pads wider than the kernel's reach, fused input maps
// (reflect pads, nearest upsampling), every activation, bias, residuals, batch 1-2,
// channel counts that leave partial passes; on every kernel family, the same bits at 1
// and 2 threads.
#include <gtest/gtest.h>

#include "kernels_common/conv_geometry.h"
#include "kernels_cpu/common/cpu_isa.h"
#include "kernels_cpu/conv2d/conv2d_thin.h"
#include "kernels_cpu/phase_lanes/phase_lanes_ukernel.h"
#include "tests/kernels_cpu/conv2d/conv2d_random_case.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::uniform_int;

ConvShape layer(int64_t cin, int64_t cout, int64_t kernel, int64_t side = 64) {
  ConvShape s;
  s.in_channels = cin;
  s.out_channels = cout;
  s.h = {side, kernel, 1, 1, kernel / 2, kernel / 2, side};
  s.w = s.h;
  return s;
}

TEST(Conv2DThin, AppliesToFewInputsIntoManyOutputs) {
  // ESPCN's and FSRCNN's first layers: where the family holds 16 channels per pass.
  const bool wide = phase_lanes_ukernel().isa == Isa::kAvx512;
  EXPECT_EQ(conv2d_thin_applies(layer(1, 64, 5), 1), wide);
  EXPECT_EQ(conv2d_thin_applies(layer(1, 56, 5), 1), wide);
  EXPECT_TRUE(conv2d_thin_applies(layer(3, 8, 9), 1));    // the thin style net's
  EXPECT_TRUE(conv2d_thin_applies(layer(3, 32, 9), 1));   // the fast-style net's
  EXPECT_FALSE(conv2d_thin_applies(layer(5, 64, 5), 1));  // more inputs, wide output: the GEMM
  EXPECT_TRUE(conv2d_thin_applies(layer(32, 9, 3), 1));   // ESPCN's last layer
  EXPECT_TRUE(conv2d_thin_applies(layer(12, 12, 3), 1));  // FSRCNN's mapping layers
  EXPECT_FALSE(conv2d_thin_applies(layer(128, 16, 3), 1));  // past the inputs measured
  EXPECT_FALSE(conv2d_thin_applies(layer(3, 4, 9), 1));   // a head: conv2d_narrow
  EXPECT_FALSE(conv2d_thin_applies(layer(3, 8, 9), 3));   // grouped
  EXPECT_FALSE(conv2d_thin_applies(layer(3, 8, 1), 1));   // 1x1
  EXPECT_FALSE(conv2d_thin_applies(layer(3, 8, 9, 8), 1));  // rows narrower than a vector
  ConvShape strided = layer(3, 32, 3);
  strided.w.stride = 2;
  strided.w.out = 32;
  EXPECT_FALSE(conv2d_thin_applies(strided, 1));
}

void check_random_layers(uint32_t seed, int trials) {
  std::mt19937 rng(seed);
  int checked = 0;
  for (int trial = 0; trial < trials; ++trial) {
    ConvShape s;
    s.batch = uniform_int(rng, 1, 2);
    // Thin inputs to any width, or thin outputs from up to 64 inputs.
    const bool thin_input = uniform_int(rng, 0, 1) == 0;
    s.in_channels = thin_input ? uniform_int(rng, 1, 4) : uniform_int(rng, 5, 64);
    s.out_channels = thin_input ? uniform_int(rng, 8, 64) : uniform_int(rng, 8, 16);
    const bool mapped = trial % 3 == 1;
    const RandomAxes axes = draw_random_axes(rng, s, mapped, 2, 40, [&](int, ConvAxis& a) {
      a.kernel = uniform_int(rng, 3, 9);
      a.pad_begin = uniform_int(rng, 0, 5);
      a.pad_end = uniform_int(rng, 0, 5);
    });
    if (s.h.out < 1 || s.w.out < 16) continue;
    // (Past 32 outputs only AVX-512 takes the path; the kernel is checked on every family.)
    if (s.out_channels <= 32 || phase_lanes_ukernel().isa == Isa::kAvx512) {
      ASSERT_TRUE(conv2d_thin_applies(s, 1)) << "trial " << trial;
    }
    const Conv2DRandomCase c = make_conv2d_random_case(rng, s, mapped, axes);
    const std::vector<float> packed = c.packed_weights();
    std::vector<float> first;
    for (int threads : {1, 2}) {
      std::vector<float> y(c.ref.size(), NAN), workspace(static_cast<size_t>(conv2d_thin_workspace(s, threads)), NAN);
      conv2d_thin(s, packed.data(), c.x.data(), y.data(), c.ep, threads, workspace.data(), c.input_map());
      const float tol = 1e-5f + 1e-6f * static_cast<float>(s.in_channels * s.h.kernel * s.w.kernel);
      ASSERT_LE(worst_relative_error(y, c.ref), tol) << "trial " << trial << ": " << s.batch << "x" << s.h.in << "x" << s.w.in << "x" << s.in_channels
                                                    << " -> " << s.out_channels << " k" << s.h.kernel << "x" << s.w.kernel << " pads " << s.h.pad_begin
                                                    << "," << s.h.pad_end << "," << s.w.pad_begin << "," << s.w.pad_end << (mapped ? " mapped" : "")
                                                    << " activation " << static_cast<int>(c.ep.activation) << (c.ep.residual ? " residual" : "")
                                                    << ", " << threads << " threads";
      if (threads == 1) first = y;
      else EXPECT_EQ(y, first) << "trial " << trial << ": 2 threads differ from 1";
    }
    ++checked;
  }
  EXPECT_GT(checked, trials / 3);
}

TEST(Conv2DThin, MatchesReferenceOnRandomGeometriesOnEveryKernelFamily) {
  for (Isa isa : kAllIsas) {
    if (!isa_supported(isa)) continue;
    SCOPED_TRACE(isa_name(isa));
    ScopedIsa forced(isa);
    check_random_layers(90 + static_cast<uint32_t>(isa), isa == active_isa() ? 150 : 50);
  }
}

}  // namespace
}  // namespace edgegan::cpu
