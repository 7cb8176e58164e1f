// The Winograd form of the split transposed convolution (conv_transpose2d_winograd.h) against the
// reference, over random k = 2*stride geometries: stride 1-3 per axis, pads from -1 to
// kernel - 1 (asymmetric), output_padding < stride, non-square maps from 1x1, batch 1-3,
// channel counts that split the 16-window tasks, the 32-column weight panels and the
// 64-column blocks, every activation, with and without bias, 1 and 2 threads; and
// through the split kernel's dispatch as a session calls it.
#include <gtest/gtest.h>

#include <array>
#include <cmath>

#include "kernels_cpu/conv_transpose2d/conv_transpose2d_split.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_winograd.h"
#include "kernels_cpu/common/half.h"
#include "tests/test_util.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_reference.h"
#include "kernels_common/conv_geometry.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"
#include "tests/kernels_cpu/fused_prelu.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::max_abs_diff;
using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

ConvAxis winograd_axis(std::mt19937& rng, int64_t in) {
  ConvAxis a;
  a.in = in;
  a.stride = uniform_int(rng, 1, 3);
  a.kernel = 2 * a.stride;
  a.pad_begin = uniform_int(rng, -1, static_cast<int>(a.kernel) - 1);
  a.pad_end = uniform_int(rng, -1, static_cast<int>(a.kernel) - 1);
  a.out = conv_transpose_output_length(a.in, a.kernel, a.stride, 1, a.pad_begin, a.pad_end, uniform_int(rng, 0, static_cast<int>(a.stride) - 1));
  return a;
}

ConvTranspose2DWeights split_weights(const ConvShape& s, const std::vector<std::vector<float>>& packed, int64_t panel_columns) {
  ConvTranspose2DWeights w;
  w.phases_h = split_conv_transpose_axis(s.h);
  w.phases_w = split_conv_transpose_axis(s.w);
  w.panel_columns = panel_columns;
  for (const auto& p : packed) w.sub_kernels.push_back(p.empty() ? nullptr : p.data());
  return w;
}

TEST(ConvTransposeWinograd, RandomGeometriesMatchReference) {
  std::mt19937 rng(2026);
  int checked = 0, through_split = 0;
  for (int attempt = 0; checked < 300; ++attempt) {
    ASSERT_LT(attempt, 3000);
    ConvShape s;
    s.batch = uniform_int(rng, 1, 3);
    s.in_channels = uniform_int(rng, 1, 40);
    s.out_channels = uniform_int(rng, 1, 80);
    s.h = winograd_axis(rng, uniform_int(rng, 1, 9));
    s.w = winograd_axis(rng, uniform_int(rng, 1, 9));
    if (s.h.out < 1 || s.w.out < 1) continue;
    ++checked;
    Epilogue ep;
    std::vector<float> slopes;
    draw_epilogue_activation(rng, ep, slopes, s.out_channels);
    const auto x = random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels));
    const auto w = random_floats(rng, static_cast<size_t>(s.in_channels * s.out_channels * s.h.kernel * s.w.kernel));
    const auto bias = random_floats(rng, static_cast<size_t>(s.out_channels));
    if (uniform_int(rng, 0, 1) == 1) ep.bias = bias.data();
    std::ostringstream what;
    what << "N" << s.batch << " Cin" << s.in_channels << " Cout" << s.out_channels << " in " << s.h.in << "x" << s.w.in << " s"
         << s.h.stride << "x" << s.w.stride << " pads " << s.h.pad_begin << "," << s.h.pad_end << "," << s.w.pad_begin << ","
         << s.w.pad_end << " out " << s.h.out << "x" << s.w.out << " act " << static_cast<int>(ep.activation) << " bias "
         << (ep.bias != nullptr);
    SCOPED_TRACE(what.str());

    const size_t out_size = static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels);
    std::vector<float> ref(out_size);
    conv_transpose2d_reference(s, x.data(), w.data(), ref.data(), ep);
    // The transforms add up to 4 inputs and 4 weights before the products and 4
    // products after: about 4x the split path's rounding (its tolerance: 1e-7 per term).
    const float terms = static_cast<float>(s.in_channels * s.h.kernel * s.w.kernel);
    const float tol = std::max(4e-5f, 4e-7f * terms);

    const int64_t panel = uniform_int(rng, 0, 1) == 0 ? kWeightPanelColumns : uniform_int(rng, 1, static_cast<int>(s.out_channels));
    const auto packed = pack_conv_transpose2d_weights(s, split_conv_transpose_axis(s.h), split_conv_transpose_axis(s.w), w.data(), panel);
    ConvTranspose2DWeights wts = split_weights(s, packed, panel);
    ASSERT_TRUE(conv_transpose2d_winograd_applies(s, wts));
    std::vector<float> transformed(static_cast<size_t>(conv_transpose2d_winograd_weight_floats(s)));
    pack_conv_transpose2d_winograd_weights(s, wts, transformed.data());

    std::vector<float> single;
    for (int threads : {1, 2}) {
      std::vector<float> ws(static_cast<size_t>(conv_transpose2d_winograd_workspace(s, threads)), NAN);
      std::vector<float> y(out_size, NAN);
      conv_transpose2d_winograd(s, wts, transformed.data(), x.data(), y.data(), ep, threads, ws.data());
      ASSERT_LE(max_abs_diff(y, ref), tol) << "threads " << threads;
      // Every window is computed the same way whichever task and thread it falls in.
      if (threads == 1) single = y;
      else ASSERT_EQ(y, single) << "2 threads differ from 1 bit for bit";
    }
    // The sliced form (no whole filters: each task makes its slice from the
    // sub-kernels) gives the same floats.
    for (int threads : {1, 2}) {
      std::vector<float> ws(static_cast<size_t>(conv_transpose2d_winograd_workspace(s, threads, /*sliced=*/true)), NAN);
      std::vector<float> y(out_size, NAN);
      conv_transpose2d_winograd(s, wts, nullptr, x.data(), y.data(), ep, threads, ws.data());
      ASSERT_EQ(y, single) << "sliced form, threads " << threads;
    }

    // Through the split kernel, as a session runs it (heads of <= 4 channels keep the
    // narrow paths there): without a workspace, and with the one it asks for.
    wts.winograd = transformed.data();
    if (s.out_channels > 4) ++through_split;
    std::vector<float> ws(static_cast<size_t>(conv_transpose2d_split_workspace(s, wts, 2)));
    for (bool with_workspace : {false, true}) {
      std::vector<float> y(out_size, NAN);
      conv_transpose2d_split(s, wts, x.data(), y.data(), ep, 2, with_workspace ? ws.data() : nullptr,
                             with_workspace ? static_cast<int64_t>(ws.size()) : 0);
      if (s.out_channels > 4) ASSERT_EQ(y, single) << "split dispatch, workspace " << with_workspace;
      else ASSERT_LE(max_abs_diff(y, ref), tol);
    }
    // ... and the sliced form through it, as a session that keeps no filters runs it.
    ConvTranspose2DWeights sliced = wts;
    sliced.winograd = nullptr;
    sliced.winograd_sliced = true;
    std::vector<float> sliced_ws(static_cast<size_t>(conv_transpose2d_split_workspace(s, sliced, 2)));
    std::vector<float> y(out_size, NAN);
    conv_transpose2d_split(s, sliced, x.data(), y.data(), ep, 2, sliced_ws.data(), static_cast<int64_t>(sliced_ws.size()));
    if (s.out_channels > 4) ASSERT_EQ(y, single) << "sliced through the split dispatch";
    else ASSERT_LE(max_abs_diff(y, ref), tol);
  }
  EXPECT_GT(through_split, 200);
}

// fp16 sub-kernels transform to exactly the filters their widened floats do.
TEST(ConvTransposeWinograd, Fp16SubKernelsTransformLikeTheirFloats) {
  std::mt19937 rng(7);
  ConvShape s{1, 24, 40, {}, {}};
  s.h = ConvAxis{6, 4, 2, 1, 1, 1, 0};
  s.h.out = conv_transpose_output_length(6, 4, 2, 1, 1, 1, 0);
  s.w = s.h;
  auto w = random_floats(rng, static_cast<size_t>(24 * 40 * 16));
  for (float& v : w) v = half_to_float(float_to_half(v));
  const auto packed = pack_conv_transpose2d_weights(s, split_conv_transpose_axis(s.h), split_conv_transpose_axis(s.w), w.data(), kWeightPanelColumns);
  const ConvTranspose2DWeights floats = split_weights(s, packed, kWeightPanelColumns);
  std::vector<std::vector<uint16_t>> halves;
  ConvTranspose2DWeights f16{floats.phases_h, floats.phases_w, {}, {}, kWeightPanelColumns};
  for (const auto& p : packed) {
    halves.emplace_back(p.size());
    for (size_t i = 0; i < p.size(); ++i) halves.back()[i] = float_to_half(p[i]);
    f16.sub_kernels_f16.push_back(halves.back().data());
  }
  std::vector<float> a(static_cast<size_t>(conv_transpose2d_winograd_weight_floats(s))), b(a.size());
  pack_conv_transpose2d_winograd_weights(s, floats, a.data());
  pack_conv_transpose2d_winograd_weights(s, f16, b.data());
  EXPECT_EQ(a, b);
  // The sliced form widens the halves it makes its slices from.
  const auto x = random_floats(rng, static_cast<size_t>(s.h.in * s.w.in * s.in_channels));
  std::vector<float> ws(static_cast<size_t>(conv_transpose2d_winograd_workspace(s, 2, true)));
  std::vector<float> from_floats(static_cast<size_t>(s.h.out * s.w.out * s.out_channels)), from_halves(from_floats.size());
  conv_transpose2d_winograd(s, floats, nullptr, x.data(), from_floats.data(), Epilogue{}, 2, ws.data());
  conv_transpose2d_winograd(s, f16, nullptr, x.data(), from_halves.data(), Epilogue{}, 2, ws.data());
  EXPECT_EQ(from_floats, from_halves);
}

// Whole layers of many windows with the sliced form's task geometry: Cin past the
// 16-row GEMM groups, Cout past one 64-column block and a slice panel, more windows than
// one 256-window chunk, batch 2; against the reference and whole filters, 1 and 2 threads.
TEST(ConvTransposeWinograd, SlicedFormOnWideLayersMatchesWholeFilters) {
  std::mt19937 rng(31);
  for (const auto& [batch, in, cin, cout] : {std::array<int64_t, 4>{2, 19, 40, 100}, std::array<int64_t, 4>{1, 24, 72, 70}}) {
    ConvShape s{batch, cin, cout, {}, {}};
    s.h = ConvAxis{in, 4, 2, 1, 1, 1, 0};
    s.h.out = conv_transpose_output_length(in, 4, 2, 1, 1, 1, 0);
    s.w = s.h;
    const auto x = random_floats(rng, static_cast<size_t>(batch * in * in * cin));
    const auto w = random_floats(rng, static_cast<size_t>(cin * cout * 16));
    const auto bias = random_floats(rng, static_cast<size_t>(cout));
    Epilogue ep;
    ep.bias = bias.data();
    ep.activation = Activation::kRelu;
    const auto packed = pack_conv_transpose2d_weights(s, split_conv_transpose_axis(s.h), split_conv_transpose_axis(s.w), w.data(), kWeightPanelColumns);
    const ConvTranspose2DWeights wts = split_weights(s, packed, kWeightPanelColumns);
    std::vector<float> transformed(static_cast<size_t>(conv_transpose2d_winograd_weight_floats(s)));
    pack_conv_transpose2d_winograd_weights(s, wts, transformed.data());
    const size_t out_size = static_cast<size_t>(batch * s.h.out * s.w.out * cout);
    std::vector<float> ref(out_size), whole(out_size);
    conv_transpose2d_reference(s, x.data(), w.data(), ref.data(), ep);
    std::vector<float> ws(static_cast<size_t>(conv_transpose2d_winograd_workspace(s, 2)));
    conv_transpose2d_winograd(s, wts, transformed.data(), x.data(), whole.data(), ep, 2, ws.data());
    ASSERT_LE(max_abs_diff(whole, ref), std::max(4e-5f, 4e-7f * static_cast<float>(cin * 16)));
    for (int threads : {1, 2}) {
      std::vector<float> sliced_ws(static_cast<size_t>(conv_transpose2d_winograd_workspace(s, threads, true)), NAN);
      std::vector<float> y(out_size, NAN);
      conv_transpose2d_winograd(s, wts, nullptr, x.data(), y.data(), ep, threads, sliced_ws.data());
      EXPECT_EQ(y, whole) << "batch " << batch << " " << in << "x" << in << "x" << cin << "->" << cout << ", threads " << threads;
    }
  }
}

TEST(ConvTransposeWinograd, OnlyForKernelTwiceTheStrideAndWhereItPays) {
  auto shape = [](int64_t batch, int64_t cin, int64_t cout, int64_t in, int64_t kernel, int64_t stride, int64_t dilation) {
    ConvShape s{batch, cin, cout, {}, {}};
    const int64_t pad = (kernel - 1) / 2;
    s.h = ConvAxis{in, kernel, stride, dilation, pad, pad, 0};
    s.h.out = conv_transpose_output_length(in, kernel, stride, dilation, pad, pad, 0);
    s.w = s.h;
    return s;
  };
  auto phases = [](const ConvShape& s) {
    ConvTranspose2DWeights w;
    w.phases_h = split_conv_transpose_axis(s.h);
    w.phases_w = split_conv_transpose_axis(s.w);
    return w;
  };
  for (const ConvShape& s : {shape(1, 64, 64, 128, 4, 2, 1), shape(1, 128, 64, 64, 4, 2, 1), shape(1, 64, 32, 32, 4, 2, 1)}) {
    EXPECT_TRUE(conv_transpose2d_winograd_pays(s, phases(s))) << s.h.in << "x" << s.in_channels;
    EXPECT_FALSE(conv_transpose2d_winograd_sliced(s)) << s.h.in << "x" << s.in_channels;
  }
  // A U-Net decoder's wide layers: too wide to keep or make whole (9.4 and 38 MiB), with
  // windows enough (289, 81) for the sliced form; 8x8x1024 (25 windows) has too few.
  for (const ConvShape& s : {shape(1, 512, 128, 32, 4, 2, 1), shape(1, 1024, 256, 16, 4, 2, 1)}) {
    EXPECT_TRUE(conv_transpose2d_winograd_pays(s, phases(s))) << s.h.in << "x" << s.in_channels;
    EXPECT_TRUE(conv_transpose2d_winograd_sliced(s)) << s.h.in << "x" << s.in_channels;
  }
  EXPECT_FALSE(conv_transpose2d_winograd_pays(shape(1, 1024, 512, 8, 4, 2, 1), phases(shape(1, 1024, 512, 8, 4, 2, 1))));
  // k5 (3 and 2 taps per phase), k3, dilation 2: not the F(2x2, 2x2) geometry.
  for (const ConvShape& s : {shape(1, 64, 64, 32, 5, 2, 1), shape(1, 64, 64, 32, 3, 2, 1), shape(1, 64, 64, 32, 4, 2, 2)})
    EXPECT_FALSE(conv_transpose2d_winograd_applies(s, phases(s))) << "kernel " << s.h.kernel << " dilation " << s.h.dilation;
  // The right geometry, but a head, too few windows, or filters past L2.
  for (const ConvShape& s : {shape(1, 64, 3, 32, 4, 2, 1), shape(1, 512, 256, 4, 4, 2, 1), shape(1, 128, 64, 16, 4, 2, 1),
                               shape(16, 256, 128, 8, 4, 2, 1)}) {
    EXPECT_TRUE(conv_transpose2d_winograd_applies(s, phases(s)));
    EXPECT_FALSE(conv_transpose2d_winograd_pays(s, phases(s))) << s.batch << "x" << s.h.in << "x" << s.in_channels << "->" << s.out_channels;
  }
}

}  // namespace
}  // namespace edgegan::cpu
