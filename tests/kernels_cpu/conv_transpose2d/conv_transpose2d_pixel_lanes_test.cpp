// The pixel-lanes path of the split transposed convolution (RGB / grey heads): which
// layers take it, its input transpose, and its results against the reference on
// random heads of every supported pattern — fp32 and fp16 weights, any panel
// width, weights packed by the caller (as a session does) or per call, 1 and 2
// threads, odd channel counts and widths that are not a multiple of 16.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <sstream>
#include <thread>

#include "kernels_cpu/conv_transpose2d/conv_transpose2d_split.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_pixel_lanes.h"
#include "kernels_cpu/common/cpu_isa.h"
#include "kernels_cpu/common/half.h"
#include "kernels_cpu/pixel_lanes/pixel_lanes_ukernel.h"
#include "kernels_cpu/common/task_runs.h"
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

struct HeadPattern {
  int64_t kernel, pad, output_padding;
};
constexpr HeadPattern kPatterns[] = {{4, 1, 0}, {5, 2, 1}, {3, 1, 1}};

ConvAxis doubling_axis(int64_t in, const HeadPattern& p) {
  ConvAxis a{in, p.kernel, 2, 1, p.pad, p.pad, 0};
  a.out = conv_transpose_output_length(in, p.kernel, 2, 1, p.pad, p.pad, p.output_padding);
  return a;
}

ConvShape head(int64_t cin, int64_t cout, int64_t h, int64_t w, const HeadPattern& p, int64_t batch = 1) {
  ConvShape s;
  s.batch = batch;
  s.in_channels = cin;
  s.out_channels = cout;
  s.h = doubling_axis(h, p);
  s.w = doubling_axis(w, p);
  return s;
}

PixelLanesPlan plan_of(const ConvShape& s) {
  return plan_pixel_lanes(s, split_conv_transpose_axis(s.h), split_conv_transpose_axis(s.w));
}

TEST(PixelLanes, PlanTakesTheOutputDoublingHeadsOnly) {
  for (const HeadPattern& p : kPatterns) {
    SCOPED_TRACE(::testing::Message() << "k" << p.kernel);
    const ConvShape s = head(64, 3, 32, 32, p);
    ASSERT_EQ(s.h.out, 64);
    const PixelLanesPlan plan = plan_of(s);
    ASSERT_TRUE(plan.ok);
    EXPECT_EQ(plan.rows, 32);
    EXPECT_EQ(plan.cols, 32);
    // One weight per (phase, tap, channel): the kernel's taps, each once.
    EXPECT_EQ(plan.slots, p.kernel * p.kernel * 3);
    EXPECT_TRUE(plan_of(head(64, 1, 32, 16, p)).ok);
    EXPECT_FALSE(plan_of(head(64, 4, 32, 32, p)).ok);   // 4 channels: the dot path
    EXPECT_FALSE(plan_of(head(64, 3, 32, 15, p)).ok);   // rows narrower than a vector
  }
  ConvShape s3 = head(64, 3, 32, 32, kPatterns[0]);  // stride 3
  s3.h.stride = s3.w.stride = 3;
  s3.h.out = s3.w.out = conv_transpose_output_length(32, 4, 3, 1, 1, 1, 0);
  EXPECT_FALSE(plan_of(s3).ok);
  ConvShape k2 = head(64, 3, 32, 32, {2, 0, 0});  // k2 s2: another pattern
  EXPECT_FALSE(plan_of(k2).ok);
}

TEST(PixelLanes, TransposeTurnsPixelsIntoZeroPaddedPlanes) {
  const PixelLanesUkernel& uk = pixel_lanes_ukernel(Isa::kAvx512);
  if (!isa_supported(Isa::kAvx512) || uk.transpose == nullptr) GTEST_SKIP() << "no AVX-512 pixel-lanes family here";
  std::mt19937 rng(5);
  for (int64_t pixels : {1, 15, 16, 17, 33, 40})
    for (int64_t channels : {1, 3, 16, 19, 64}) {
      SCOPED_TRACE(::testing::Message() << pixels << " pixels x " << channels);
      const auto src = random_floats(rng, static_cast<size_t>(pixels * channels));
      const int64_t row_floats = (pixels + 15) / 16 * 16 + 16, stride = row_floats + 16;
      std::vector<float> dst(static_cast<size_t>(channels * stride), NAN);
      uk.transpose(src.data(), pixels, channels, dst.data(), stride, row_floats);
      for (int64_t c = 0; c < channels; ++c)
        for (int64_t p = 0; p < stride; ++p) {
          const float v = dst[static_cast<size_t>(c * stride + p)];
          if (p < pixels) ASSERT_EQ(v, src[static_cast<size_t>(p * channels + c)]) << c << "," << p;
          else if (p < row_floats) ASSERT_EQ(v, 0.f) << c << "," << p;
          else ASSERT_TRUE(std::isnan(v)) << "wrote past the plane row at " << c << "," << p;
        }
    }
}

// Random heads of every supported pattern against the reference.
void check_random_heads(uint32_t seed, int cases) {
  std::mt19937 rng(seed);
  for (int n = 0; n < cases; ++n) {
    const HeadPattern& p = kPatterns[static_cast<size_t>(uniform_int(rng, 0, 2))];
    const ConvShape s = head(uniform_int(rng, 1, 80), uniform_int(rng, 1, 3), uniform_int(rng, 1, 6), uniform_int(rng, 16, 40), p,
                               uniform_int(rng, 1, 3));
    Epilogue ep;
    const auto bias = random_floats(rng, static_cast<size_t>(s.out_channels));
    ep.bias = uniform_int(rng, 0, 1) ? bias.data() : nullptr;
    std::vector<float> slopes;
    draw_epilogue_activation(rng, ep, slopes, s.out_channels);
    ConvTranspose2DWeights split;
    split.phases_h = split_conv_transpose_axis(s.h);
    split.phases_w = split_conv_transpose_axis(s.w);
    split.panel_columns = uniform_int(rng, 0, 1) ? uniform_int(rng, 1, static_cast<int>(s.out_channels)) : kWeightPanelColumns;
    std::ostringstream what;
    what << "case " << n << ": N" << s.batch << " Cin" << s.in_channels << " Cout" << s.out_channels << " " << s.h.in << "x" << s.w.in
         << " k" << p.kernel << " panels " << split.panel_columns << " act " << static_cast<int>(ep.activation);
    SCOPED_TRACE(what.str());
    const PixelLanesPlan plan = plan_pixel_lanes(s, split.phases_h, split.phases_w);
    ASSERT_TRUE(plan.ok);
    // On this ISA the split kernel must take the pixel-lanes path when it has the family.
    ASSERT_EQ(pixel_lanes_available(plan), pixel_lanes_ukernel().run != nullptr);

    const bool fp16 = uniform_int(rng, 0, 3) == 0;
    auto w = random_floats(rng, static_cast<size_t>(s.in_channels * s.out_channels * s.h.kernel * s.w.kernel));
    if (fp16)
      for (float& v : w) v = half_to_float(float_to_half(v));
    const auto x = random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels));
    std::vector<float> ref(static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels));
    conv_transpose2d_reference(s, x.data(), w.data(), ref.data(), ep);

    const auto packed = pack_conv_transpose2d_weights(s, split.phases_h, split.phases_w, w.data(), split.panel_columns);
    std::vector<std::vector<uint16_t>> halves;
    for (const auto& ph : packed) {
      if (fp16) {
        halves.emplace_back(ph.size());
        for (size_t i = 0; i < ph.size(); ++i) halves.back()[i] = float_to_half(ph[i]);
        split.sub_kernels_f16.push_back(halves.back().data());
      } else {
        split.sub_kernels.push_back(ph.data());
      }
    }
    std::vector<float> lanes_weights(static_cast<size_t>(plan.weight_floats()));
    pack_pixel_lanes_weights(s, split, plan, lanes_weights.data());

    const float tol = std::max(1e-5f, 1e-7f * static_cast<float>(s.in_channels * s.h.kernel * s.w.kernel));
    for (bool prepacked : {false, true}) {
      ConvTranspose2DWeights run = split;
      run.pixel_lanes_plan = prepacked ? &plan : nullptr;
      run.pixel_lanes = prepacked ? lanes_weights.data() : nullptr;
      for (int threads : {1, 2}) {
        // The caller's workspace, exactly as large as asked and full of NaN (its contents
        // are ignored), or none, or one float short (the kernel then allocates its own).
        const int64_t asked = conv_transpose2d_split_workspace(s, run, threads);
        const int given = uniform_int(rng, 0, 2);
        std::vector<float> workspace(static_cast<size_t>(given == 0 ? 0 : given == 1 ? asked : std::max<int64_t>(0, asked - 1)), NAN);
        std::vector<float> y(ref.size(), NAN);
        conv_transpose2d_split(s, run, x.data(), y.data(), ep, threads, given ? workspace.data() : nullptr,
                               static_cast<int64_t>(workspace.size()));
        ASSERT_LE(max_abs_diff(y, ref), tol) << (fp16 ? "fp16" : "fp32") << (prepacked ? ", packed by the caller" : ", packed per call")
                                             << ", threads " << threads << ", workspace " << (given == 0 ? "none" : given == 1 ? "given" : "short");
      }
    }
  }
}

TEST(PixelLanes, RandomHeadsMatchReferenceOnEveryKernelFamily) {
  for (Isa isa : kAllIsas) {
    if (!isa_supported(isa)) continue;
    SCOPED_TRACE(isa_name(isa));
    ScopedIsa forced(isa);
    check_random_heads(40 + static_cast<uint32_t>(isa), isa == Isa::kAvx512 ? 120 : 20);
  }
}

// Every task is handed out exactly once however the threads race, and a thread
// walks its own run front to back before taking others' tasks from their back.
TEST(TaskRuns, EveryTaskOnceOwnRunInOrderStealingFromTheBack) {
  {
    TaskRuns runs(10, 2);
    std::vector<int64_t> order;
    for (int64_t t; (t = runs.next(0)) >= 0;) order.push_back(t);
    EXPECT_EQ(order, (std::vector<int64_t>{0, 1, 2, 3, 4, 9, 8, 7, 6, 5}));
  }
  for (int64_t tasks : {0, 1, 7, 1000})
    for (int threads : {1, 2, 3, 8}) {
      TaskRuns runs(tasks, threads);
      std::vector<std::atomic<int>> seen(static_cast<size_t>(tasks));
      std::vector<std::thread> pool;
      for (int i = 0; i < threads; ++i)
        pool.emplace_back([&, i] {
          for (int64_t t; (t = runs.next(i)) >= 0;) seen[static_cast<size_t>(t)].fetch_add(1);
        });
      for (auto& th : pool) th.join();
      for (int64_t t = 0; t < tasks; ++t) ASSERT_EQ(seen[static_cast<size_t>(t)].load(), 1) << "task " << t << " of " << tasks;
    }
}

}  // namespace
}  // namespace edgegan::cpu
