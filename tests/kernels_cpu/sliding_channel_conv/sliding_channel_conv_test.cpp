// Sliding-channel convolution: the reference against the channel-stack form (gather +
// grouped convolution), the fast forward and backward against the reference over random
// (Cin, Cout, window, start stride, kernel, batch) including co = 0, full-width and
// wrapping windows, threads 1 and 2; the reference's backward against finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels_cpu/common/cpu_isa.h"
#include "kernels_cpu/conv2d/conv2d_grouped.h"
#include "kernels_cpu/sliding_channel_conv/sliding_channel_conv.h"
#include "tests/kernels_cpu/backward_test_util.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::max_abs_diff;
using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

struct Case {
  SlidingChannelPlan plan;
  int64_t stride = 1;
};

// trial % 4: 0 co = 0 (stride = window), 1 full-width window, 2 and 3 any overlap.
Case random_case(std::mt19937& rng, int trial, bool small) {
  ConvShape s;
  s.batch = uniform_int(rng, 1, 2);
  s.in_channels = uniform_int(rng, 1, small ? 6 : 37);
  s.out_channels = uniform_int(rng, 1, small ? 6 : 41);
  const bool spatial = uniform_int(rng, 0, 2) == 0;
  for (ConvAxis* a : {&s.h, &s.w}) {
    for (;;) {
      a->in = uniform_int(rng, 1, small ? 4 : 19);
      a->kernel = spatial ? uniform_int(rng, 1, 3) : 1;
      a->stride = spatial ? uniform_int(rng, 1, 2) : 1;
      a->dilation = spatial && uniform_int(rng, 0, 3) == 0 ? 2 : 1;
      a->pad_begin = uniform_int(rng, 0, static_cast<int>(a->kernel) - 1);
      a->pad_end = uniform_int(rng, 0, static_cast<int>(a->kernel) - 1);
      a->out = conv_output_length(a->in, a->kernel, a->stride, a->dilation, a->pad_begin, a->pad_end);
      if (a->out >= 1) break;
    }
  }
  const int64_t cin = s.in_channels;
  const int64_t window = trial % 4 == 1 ? cin : uniform_int(rng, 1, static_cast<int>(cin));
  const double co = trial % 4 == 0 ? 0.0 : uniform_int(rng, 0, 99) / 100.0;
  Case c;
  c.stride = window - static_cast<int64_t>(std::floor(co * static_cast<double>(window)));
  c.plan = plan_sliding_channel_conv(s, window, sliding_channel_conv_starts(cin, s.out_channels, c.stride));
  return c;
}

size_t x_count(const ConvShape& s) { return static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels); }
size_t y_count(const ConvShape& s) { return static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels); }
size_t w_count(const SlidingChannelPlan& p) {
  return static_cast<size_t>(p.shape.out_channels * p.window * p.shape.h.kernel * p.shape.w.kernel);
}

TEST(SlidingChannelConv, StartsRepeatWithTheCyclicDistance) {
  // Cin 8, window 4, co 50%: stride 2, starts 0 2 4 6, then 0 again.
  EXPECT_EQ(sliding_channel_conv_starts(8, 16, 2), (std::vector<int32_t>{0, 2, 4, 6}));
  EXPECT_EQ(sliding_channel_conv_period(64, 128, 6), 32);  // gw 8, co 25%: 64 / gcd(64, 6)
  EXPECT_EQ(sliding_channel_conv_period(64, 128, 8), 8);   // co = 0: grouped
  EXPECT_EQ(sliding_channel_conv_period(6, 4, 5), 4);      // shorter than Cin / gcd: Cout
  EXPECT_EQ(sliding_channel_conv_period(6, 4, 6), 1);      // full-width windows, all at 0
}

TEST(SlidingChannelConv, ReferenceIsTheChannelStackForm) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 24; ++trial) {
    const Case c = random_case(rng, trial, false);
    const SlidingChannelPlan& p = c.plan;
    const ConvShape& s = p.shape;
    const std::vector<float> x = random_floats(rng, x_count(s)), w = random_floats(rng, w_count(p)),
                             bias = random_floats(rng, static_cast<size_t>(s.out_channels));
    // The stack: channel o*gw + j of every pixel is input channel (start(o) + j) mod Cin.
    ConvShape stacked = s;
    stacked.in_channels = s.out_channels * p.window;
    std::vector<float> stack(static_cast<size_t>(s.batch * s.h.in * s.w.in * stacked.in_channels));
    for (int64_t px = 0; px < s.batch * s.h.in * s.w.in; ++px)
      for (int64_t o = 0; o < s.out_channels; ++o)
        for (int64_t j = 0; j < p.window; ++j)
          stack[static_cast<size_t>(px * stacked.in_channels + o * p.window + j)] =
              x[static_cast<size_t>(px * s.in_channels + (p.start(o) + j) % s.in_channels)];
    std::vector<float> expected(y_count(s)), got(y_count(s));
    Epilogue ep{bias.data(), Activation::kLeakyRelu, 0.1f};
    conv2d_grouped_reference(stacked, s.out_channels, stack.data(), w.data(), expected.data(), ep);
    sliding_channel_conv_reference(p, x.data(), w.data(), got.data(), ep);
    EXPECT_LT(max_abs_diff(expected, got), 1e-4f) << "trial " << trial;
  }
}

void check_fast_against_reference() {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    const Case c = random_case(rng, trial, false);
    const SlidingChannelPlan& p = c.plan;
    const ConvShape& s = p.shape;
    const std::vector<float> x = random_floats(rng, x_count(s)), w = random_floats(rng, w_count(p)),
                             bias = random_floats(rng, static_cast<size_t>(s.out_channels)), dy = random_floats(rng, y_count(s));
    std::vector<float> packed(w.size());
    pack_sliding_channel_conv_weights(p, w.data(), packed.data());
    std::vector<float> unpacked(w.size());
    unpack_sliding_channel_conv_weights(p, packed.data(), unpacked.data());
    ASSERT_EQ(unpacked, w);
    const Activation act = trial % 3 == 0 ? Activation::kNone : trial % 3 == 1 ? Activation::kRelu : Activation::kTanh;
    Epilogue ep{trial % 2 ? bias.data() : nullptr, act, 0.01f};
    std::vector<float> expected(y_count(s));
    sliding_channel_conv_reference(p, x.data(), w.data(), expected.data(), ep);
    std::vector<float> dx_ref(x.size()), dw_ref(w.size()), db_ref(static_cast<size_t>(s.out_channels));
    sliding_channel_conv_backward_reference(p, x.data(), w.data(), dy.data(), dx_ref.data(), dw_ref.data(), db_ref.data());
    std::vector<float> dw_ref_packed(w.size());
    pack_sliding_channel_conv_weights(p, dw_ref.data(), dw_ref_packed.data());
    for (int threads : {1, 2}) {
      std::vector<float> y(y_count(s), NAN), ws(static_cast<size_t>(sliding_channel_conv_workspace(p, threads)), NAN);
      sliding_channel_conv(p, s.batch, packed.data(), x.data(), y.data(), ep, threads, ws.data());
      EXPECT_TRUE(all_finite(y)) << "trial " << trial;
      EXPECT_LT(max_abs_diff(expected, y), 2e-5f * (1 + p.window)) << "trial " << trial << " threads " << threads;

      std::vector<float> dx(x.size(), NAN), dw(w.size(), NAN);
      std::vector<float> bws(static_cast<size_t>(sliding_channel_conv_backward_workspace(p, threads)), NAN);
      sliding_channel_conv_backward_input(p, s.batch, packed.data(), dy.data(), dx.data(), threads, bws.data());
      sliding_channel_conv_backward_weights(p, s.batch, x.data(), dy.data(), dw.data(), threads, bws.data());
      EXPECT_TRUE(all_finite(dx) && all_finite(dw)) << "trial " << trial;
      EXPECT_LT(max_abs_diff(dx_ref, dx), 1e-4f * (1 + p.window)) << "dx trial " << trial << " threads " << threads;
      EXPECT_LT(max_abs_diff(dw_ref_packed, dw), 1e-4f * (1 + s.batch * s.h.out * s.w.out)) << "dw trial " << trial;
      // dW sums in one fixed order whatever the thread count.
      if (threads == 2) {
        std::vector<float> dw1(w.size()), bws1(static_cast<size_t>(sliding_channel_conv_backward_workspace(p, 1)), NAN);
        sliding_channel_conv_backward_weights(p, s.batch, x.data(), dy.data(), dw1.data(), 1, bws1.data());
        EXPECT_EQ(dw, dw1) << "trial " << trial;
      }
    }
  }
}

// Every ISA's inner loops this machine runs (baseline, AVX2, AVX-512).
TEST(SlidingChannelConv, FastMatchesReference) {
  for (Isa isa : kAllIsas) {
    if (!isa_supported(isa)) continue;
    SCOPED_TRACE(isa_name(isa));
    ScopedIsa forced(isa);
    check_fast_against_reference();
  }
}

TEST(SlidingChannelConv, ReferenceBackwardMatchesFiniteDifferences) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 8; ++trial) {
    const Case c = random_case(rng, trial, true);
    const SlidingChannelPlan& p = c.plan;
    const ConvShape& s = p.shape;
    std::vector<float> x = random_floats(rng, x_count(s)), w = random_floats(rng, w_count(p)),
                       bias = random_floats(rng, static_cast<size_t>(s.out_channels));
    const std::vector<float> g = random_floats(rng, y_count(s));
    const auto forward = [&] {
      std::vector<float> y(y_count(s));
      sliding_channel_conv_reference(p, x.data(), w.data(), y.data(), Epilogue{bias.data()});
      return y;
    };
    std::vector<float> dx(x.size()), dw(w.size()), db(bias.size());
    sliding_channel_conv_backward_reference(p, x.data(), w.data(), g.data(), dx.data(), dw.data(), db.data());
    for (size_t i = 0; i < x.size(); ++i) expect_close(finite_difference(x, i, g, forward), dx[i], "dx", i);
    for (size_t i = 0; i < w.size(); ++i) expect_close(finite_difference(w, i, g, forward), dw[i], "dw", i);
    for (size_t i = 0; i < bias.size(); ++i) expect_close(finite_difference(bias, i, g, forward), db[i], "db", i);
  }
}

}  // namespace
}  // namespace edgegan::cpu
