// The phase-lanes path of the split deconvolution (thin layers: 1-8 output channels,
// kernels up to 9, strides 1-4): which layers it plans, and its results against the
// reference over random thin geometries — every stride and kernel size per axis, pads
// (negative too), output_padding, dilation 2, batch > 1, odd channel counts and widths, every
// activation, bias, residual, fp32 and fp16 weights, any panel width, weights packed
// by the caller (as a session does) or per call — on every kernel family, bit for bit
// the same at 1 and 2 threads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <sstream>

#include "kernels_common/conv_geometry.h"
#include "kernels_cpu/common/cpu_isa.h"
#include "kernels_cpu/common/half.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_phase_lanes.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_reference.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_split.h"
#include "kernels_cpu/phase_lanes/phase_lanes_ukernel.h"
#include "tests/test_util.h"
#include "tests/kernels_cpu/fused_prelu.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::max_abs_diff;
using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

ConvAxis axis(int64_t in, int64_t kernel, int64_t stride, int64_t pad_begin, int64_t pad_end, int64_t output_padding, int64_t dilation = 1) {
  ConvAxis a{in, kernel, stride, dilation, pad_begin, pad_end, 0};
  a.out = conv_transpose_output_length(in, kernel, stride, dilation, pad_begin, pad_end, output_padding);
  return a;
}

PhaseLanesPlan plan_of(const ConvShape& s) { return plan_phase_lanes(s, split_conv_transpose_axis(s.h), split_conv_transpose_axis(s.w)); }

ConvShape fsrcnn_head(int64_t h, int64_t w) {
  ConvShape s;
  s.in_channels = 56;
  s.out_channels = 1;
  s.h = axis(h, 9, 3, 4, 4, 2);
  s.w = axis(w, 9, 3, 4, 4, 2);
  return s;
}

TEST(PhaseLanes, PlansThinLayersOnly) {
  const ConvShape s = fsrcnn_head(36, 64);
  ASSERT_EQ(s.h.out, 108);
  const PhaseLanesPlan plan = plan_of(s);
  ASSERT_TRUE(plan.ok);
  EXPECT_EQ(plan.span_h, 3);
  EXPECT_EQ(plan.span_w, 3);
  EXPECT_EQ(plan.outputs, 9);  // 3x3 phases, one channel
  EXPECT_EQ(plan.isa, phase_lanes_ukernel().isa);
  // Every tap of every phase is one weight; k9 s3 leaves no phase short of taps.
  EXPECT_EQ(plan.weight_floats(), 56 * 81);
  ConvTranspose2DWeights split;
  split.phases_h = split_conv_transpose_axis(s.h);
  split.phases_w = split_conv_transpose_axis(s.w);
  EXPECT_TRUE(conv_transpose2d_split_phase_lanes(s, split));
  split.allow_phase_lanes = false;
  EXPECT_FALSE(conv_transpose2d_split_phase_lanes(s, split));
  ConvShape wide = s;
  wide.out_channels = kPhaseLanesMaxChannels + 1;
  EXPECT_FALSE(plan_of(wide).ok);
  ConvShape dilated = s;  // stride 1, dilation 2: tap 8 reads 16 columns back, past the span of 9
  dilated.w = {64, 9, 1, 2, 4, 4, 0};
  dilated.w.out = conv_transpose_output_length(64, 9, 1, 2, 4, 4, 0);
  EXPECT_FALSE(plan_of(dilated).ok);
  dilated.w.stride = 2;  // at stride 2 each phase's offsets stay within 0..8
  dilated.w.out = conv_transpose_output_length(64, 9, 2, 2, 4, 4, 1);
  EXPECT_TRUE(plan_of(dilated).ok);
  // Outputs of a pass never pass the family's maximum, passes as even as can be.
  ConvShape rgb = s;
  rgb.out_channels = 3;  // 27 outputs
  const PhaseLanesPlan p3 = plan_of(rgb);
  ASSERT_TRUE(p3.ok);
  for (int64_t i = 0; i < p3.passes(); ++i) {
    const int64_t n = p3.pass_begin[static_cast<size_t>(i) + 1] - p3.pass_begin[static_cast<size_t>(i)];
    EXPECT_LE(n, phase_lanes_ukernel().max_outputs);
    EXPECT_GE(n, 27 / p3.passes());
  }
}

// A random thin layer, its weights split as the converter writes them, and the
// reference output (plus the residual, which the reference leaves out).
void check_random_layers(uint32_t seed, int cases) {
  std::mt19937 rng(seed);
  for (int n = 0; n < cases; ++n) {
    ConvShape s;
    s.batch = uniform_int(rng, 1, 3);
    s.in_channels = uniform_int(rng, 1, 40);
    s.out_channels = uniform_int(rng, 1, static_cast<int>(kPhaseLanesMaxChannels));
    for (ConvAxis* a : {&s.h, &s.w}) {
      const int64_t stride = uniform_int(rng, 1, 4), kernel = uniform_int(rng, 1, 9);
      // Dilation 2 now and then, where the phases' offsets stay within the span of 9.
      const int64_t dilation = uniform_int(rng, 0, 4) == 0 && (2 * (kernel - 1)) / stride < kPhaseLanesMaxSpan ? 2 : 1;
      // Pads from -1 (ONNX output_shape asking for more) to kernel - 1, output_padding < max(stride, dilation).
      const int64_t pb = uniform_int(rng, -1, static_cast<int>(kernel) - 1), pe = uniform_int(rng, -1, static_cast<int>(kernel) - 1);
      int64_t in = uniform_int(rng, 1, a == &s.h ? 9 : 45);
      *a = axis(in, kernel, stride, pb, pe, uniform_int(rng, 0, static_cast<int>(std::max(stride, dilation)) - 1), dilation);
      while (a->out < 1) *a = axis(++in, kernel, stride, pb, pe, 0, dilation);
    }
    Epilogue ep;
    const auto bias = random_floats(rng, static_cast<size_t>(s.out_channels));
    ep.bias = uniform_int(rng, 0, 1) ? bias.data() : nullptr;
    ep.activation = static_cast<Activation>(uniform_int(rng, 0, kActivationCount - 1));
    const auto slopes = random_prelu_slopes(rng, s.out_channels);
    if (ep.activation == Activation::kPRelu) ep.slope = slopes.data();
    ep.alpha = 0.2f;
    ep.beta = ep.activation == Activation::kClip ? 0.5f : ep.activation == Activation::kSelu ? 1.05f : 0.5f;
    if (ep.activation == Activation::kClip) ep.alpha = -0.5f;
    const size_t out_floats = static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels);
    const auto residual = random_floats(rng, out_floats);
    ep.residual = uniform_int(rng, 0, 2) == 0 ? residual.data() : nullptr;
    ConvTranspose2DWeights split;
    split.phases_h = split_conv_transpose_axis(s.h);
    split.phases_w = split_conv_transpose_axis(s.w);
    split.panel_columns = uniform_int(rng, 0, 1) ? uniform_int(rng, 1, static_cast<int>(s.out_channels)) : kWeightPanelColumns;
    std::ostringstream what;
    what << "case " << n << ": N" << s.batch << " Cin" << s.in_channels << " Cout" << s.out_channels << " " << s.h.in << "x" << s.w.in
         << " k" << s.h.kernel << "x" << s.w.kernel << " s" << s.h.stride << "x" << s.w.stride << " d" << s.h.dilation << "x" << s.w.dilation << " pads " << s.h.pad_begin << ","
         << s.h.pad_end << "," << s.w.pad_begin << "," << s.w.pad_end << " out " << s.h.out << "x" << s.w.out << " panels "
         << split.panel_columns << " act " << static_cast<int>(ep.activation) << (ep.residual ? " residual" : "");
    SCOPED_TRACE(what.str());
    const PhaseLanesPlan plan = plan_phase_lanes(s, split.phases_h, split.phases_w);
    ASSERT_TRUE(plan.ok);

    const bool fp16 = uniform_int(rng, 0, 3) == 0;
    auto w = random_floats(rng, static_cast<size_t>(s.in_channels * s.out_channels * s.h.kernel * s.w.kernel));
    if (fp16)
      for (float& v : w) v = half_to_float(float_to_half(v));
    const auto x = random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels));
    std::vector<float> ref(out_floats);
    conv_transpose2d_reference(s, x.data(), w.data(), ref.data(), ep);
    if (ep.residual)
      for (size_t i = 0; i < ref.size(); ++i) ref[i] += residual[i];

    const auto packed = pack_conv_transpose2d_weights(s, split.phases_h, split.phases_w, w.data(), split.panel_columns);
    std::vector<std::vector<uint16_t>> halves;
    for (const auto& ph : packed) {
      if (fp16) {
        halves.emplace_back(ph.size());
        for (size_t i = 0; i < ph.size(); ++i) halves.back()[i] = float_to_half(ph[i]);
        split.sub_kernels_f16.push_back(ph.empty() ? nullptr : halves.back().data());
      } else {
        split.sub_kernels.push_back(ph.empty() ? nullptr : ph.data());
      }
    }
    std::vector<float> lanes_weights(static_cast<size_t>(plan.weight_floats()));
    pack_phase_lanes_weights(s, split, plan, lanes_weights.data());

    const float tol = std::max(2e-5f, 2e-7f * static_cast<float>(s.in_channels * s.h.kernel * s.w.kernel));
    // The kernel itself with the caller's packed weights, in a workspace exactly as large
    // as asked and full of NaN; the same bits at 1 and 2 threads.
    std::vector<float> first;
    for (int threads : {1, 2}) {
      std::vector<float> y(ref.size(), NAN);
      std::vector<float> workspace(static_cast<size_t>(phase_lanes_workspace_floats(plan, threads)), NAN);
      conv_transpose2d_phase_lanes(s, split, plan, lanes_weights.data(), x.data(), y.data(), ep, threads, workspace.data());
      ASSERT_LE(max_abs_diff(y, ref), tol) << (fp16 ? "fp16" : "fp32") << ", threads " << threads;
      if (first.empty()) first = y;
      else ASSERT_EQ(std::memcmp(first.data(), y.data(), y.size() * sizeof(float)), 0) << "2 threads differ from 1";
    }
    // Through the split kernel, with the session's plan and weights or none: where it
    // takes this path, the same bits.
    for (bool prepacked : {false, true}) {
      ConvTranspose2DWeights run = split;
      run.phase_lanes_plan = prepacked ? &plan : nullptr;
      run.phase_lanes = prepacked ? lanes_weights.data() : nullptr;
      const bool taken = conv_transpose2d_split_phase_lanes(s, run);
      for (int threads : {1, 2}) {
        std::vector<float> workspace(static_cast<size_t>(conv_transpose2d_split_workspace(s, run, threads)), NAN);
        std::vector<float> y(ref.size(), NAN);
        conv_transpose2d_split(s, run, x.data(), y.data(), ep, threads, workspace.data(), static_cast<int64_t>(workspace.size()));
        if (taken) {
          ASSERT_EQ(std::memcmp(first.data(), y.data(), y.size() * sizeof(float)), 0) << "split kernel, threads " << threads;
        }
      }
    }
  }
}

TEST(PhaseLanes, RandomThinLayersMatchReferenceOnEveryKernelFamily) {
  for (Isa isa : kAllIsas) {
    if (!isa_supported(isa)) continue;
    SCOPED_TRACE(isa_name(isa));
    ScopedIsa forced(isa);
    check_random_layers(70 + static_cast<uint32_t>(isa), isa == active_isa() ? 150 : 40);
  }
}

// The widest rows use several calls per row and several passes; FSRCNN's head at a
// size where a row is many blocks, against the reference.
TEST(PhaseLanes, FsrcnnHeadMatchesReference) {
  std::mt19937 rng(3);
  ConvShape s = fsrcnn_head(7, 150);
  s.batch = 2;
  const auto w = random_floats(rng, static_cast<size_t>(56 * 81));
  const auto x = random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * 56));
  const float bias = 0.25f;
  Epilogue ep;
  ep.bias = &bias;
  std::vector<float> ref(static_cast<size_t>(s.batch * s.h.out * s.w.out)), y(ref.size(), NAN);
  conv_transpose2d_reference(s, x.data(), w.data(), ref.data(), ep);
  ConvTranspose2DWeights split;
  split.phases_h = split_conv_transpose_axis(s.h);
  split.phases_w = split_conv_transpose_axis(s.w);
  const auto packed = pack_conv_transpose2d_weights(s, split.phases_h, split.phases_w, w.data());
  for (const auto& p : packed) split.sub_kernels.push_back(p.data());
  conv_transpose2d_split(s, split, x.data(), y.data(), ep, 2);
  EXPECT_LE(max_abs_diff(y, ref), 1e-4f);
}

}  // namespace
}  // namespace edgegan::cpu
