// Winograd F(4x4, 3x3) == the reference over random 3x3 stride-1 geometries: ragged
// 4x4 blocks at the right and bottom edges, asymmetric pads, channel counts across the
// 16-lane transforms and the 64-column blocks, every inlined and non-inlined
// activation, residuals, fused input maps (reflect pads, nearest upsampling), 1 and 2
// threads.
#include <gtest/gtest.h>

#include "kernels_cpu/common/conv_geometry.h"
#include "kernels_cpu/conv2d/conv2d_input_map.h"
#include "kernels_cpu/conv2d/conv2d_reference.h"
#include "kernels_cpu/conv2d/conv2d_winograd.h"
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

TEST(Conv2DWinograd, MatchesReferenceOnRandomGeometries) {
  std::mt19937 rng(2024);
  for (int trial = 0; trial < 160; ++trial) {
    ConvShape s;
    s.batch = uniform_int(rng, 1, 2);
    s.in_channels = trial % 4 == 0 ? uniform_int(rng, 1, 8) : uniform_int(rng, 9, 80);
    s.out_channels = trial % 5 == 0 ? uniform_int(rng, 65, 140) : uniform_int(rng, 1, 48);
    // An input map on some trials: the convolution sees the mapped size.
    const bool mapped = trial % 3 == 1;
    InputMapAxis map_h, map_w;
    int64_t src_h = 0, src_w = 0;
    for (int axis = 0; axis < 2; ++axis) {
      ConvAxis& a = axis == 0 ? s.h : s.w;
      InputMapAxis& m = axis == 0 ? map_h : map_w;
      int64_t& src = axis == 0 ? src_h : src_w;
      src = uniform_int(rng, 1, 19);
      if (mapped) {
        m.factor = uniform_int(rng, 1, 2);
        m.pad_begin = uniform_int(rng, 0, 1);
        m.pad_end = uniform_int(rng, 0, 1);
        src = std::max<int64_t>(src, 2);  // reflect needs two pixels
      }
      a.in = m.length(src);
      a.kernel = 3;
      a.stride = 1;
      a.dilation = 1;
      a.pad_begin = uniform_int(rng, 0, 2);
      a.pad_end = uniform_int(rng, 0, 2);
      a.out = conv_output_length(a.in, a.kernel, a.stride, a.dilation, a.pad_begin, a.pad_end);
    }
    if (s.h.out < 1 || s.w.out < 1) continue;
    const auto x = random_floats(rng, static_cast<size_t>(s.batch * src_h * src_w * s.in_channels));
    const auto w = random_floats(rng, static_cast<size_t>(s.out_channels * s.in_channels * 9));
    const auto bias = random_floats(rng, static_cast<size_t>(s.out_channels));
    const size_t out_size = static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels);
    const auto residual = random_floats(rng, out_size);
    Epilogue ep;
    ep.bias = uniform_int(rng, 0, 1) ? bias.data() : nullptr;
    ep.activation = static_cast<Activation>(uniform_int(rng, 0, kActivationCount - 1));
    ep.alpha = ep.activation == Activation::kClip ? -0.5f : 0.2f;
    ep.beta = ep.activation == Activation::kClip ? 0.5f : ep.activation == Activation::kSelu ? 1.0507f : 0.5f;
    if (ep.activation == Activation::kNone && uniform_int(rng, 0, 1)) ep.residual = residual.data();

    // The reference reads the map gathered; the kernel reads through it.
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
    std::vector<float> ref(out_size), y(out_size, NAN), packed(w.size());
    Epilogue ref_ep = ep;
    ref_ep.residual = nullptr;
    conv2d_reference(s, seen.data(), w.data(), ref.data(), ref_ep);
    if (ep.residual)
      for (size_t i = 0; i < out_size; ++i) ref[i] += residual[i];
    pack_conv2d_weights(s, w.data(), packed.data());
    std::vector<float> transformed(static_cast<size_t>(conv2d_winograd_weight_floats(s)));
    pack_conv2d_winograd_weights(s, packed.data(), transformed.data());
    const int threads = uniform_int(rng, 1, 2);
    std::vector<float> workspace(static_cast<size_t>(conv2d_winograd_workspace(s, threads)));
    conv2d_winograd(s, transformed.data(), x.data(), y.data(), ep, threads, workspace.data(), mapped ? &map : nullptr);
    // The transforms' coefficients (up to 8 and 5) add rounding that grows with the depth.
    const float tol = 2e-5f + 2e-6f * static_cast<float>(s.in_channels * 9);
    float worst = 0.f;
    for (size_t i = 0; i < out_size; ++i) worst = std::max(worst, std::abs(y[i] - ref[i]) / std::max(1.f, std::abs(ref[i])));
    ASSERT_LE(worst, tol) << "trial " << trial << ": " << s.batch << "x" << s.h.in << "x" << s.w.in << "x" << s.in_channels << " -> "
                          << s.out_channels << " pads " << s.h.pad_begin << "," << s.h.pad_end << "," << s.w.pad_begin << "," << s.w.pad_end
                          << (mapped ? " mapped" : "") << " activation " << static_cast<int>(ep.activation) << (ep.residual ? " residual" : "");
  }
}

}  // namespace
}  // namespace edgegan::cpu
