// A residual/skip Add fused into the epilogue (Epilogue::residual, group_norm's
// residual): the fused result equals the unfused kernel's output plus the residual,
// bit for bit (the same additions in the same order), on every path: the trimmed
// conv's many-channel and few-channel (gathered taps) paths, depthwise, grouped, the
// grouped reference, and GroupNorm's apply pass (in place too); threads 1 and 2.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels_common/conv_geometry.h"
#include "kernels_cpu/conv2d/conv2d_grouped.h"
#include "kernels_cpu/conv2d/conv2d_reference.h"
#include "kernels_cpu/conv2d/conv2d_trimmed.h"
#include "kernels_cpu/group_norm/group_norm.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

std::vector<float> plus(std::vector<float> y, const std::vector<float>& r) {
  for (size_t i = 0; i < y.size(); ++i) y[i] += r[i];
  return y;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

ConvShape random_conv(std::mt19937& rng, int64_t cin, int64_t cout) {
  ConvShape s;
  s.batch = uniform_int(rng, 1, 3);
  s.in_channels = cin;
  s.out_channels = cout;
  for (ConvAxis* a : {&s.h, &s.w}) {
    do {
      a->in = uniform_int(rng, 1, 11);
      a->kernel = uniform_int(rng, 1, 4);
      a->stride = uniform_int(rng, 1, 3);
      a->dilation = uniform_int(rng, 1, 2);
      a->pad_begin = uniform_int(rng, 0, static_cast<int>(a->kernel) - 1);
      a->pad_end = uniform_int(rng, 0, static_cast<int>(a->kernel) - 1);
      a->out = conv_output_length(a->in, a->kernel, a->stride, a->dilation, a->pad_begin, a->pad_end);
    } while (a->out < 1);
  }
  return s;
}

// Runs `conv` (writing y from an Epilogue) unfused then fused, for both thread counts.
template <typename Conv>
void expect_fused_equals_unfused(std::mt19937& rng, const ConvShape& s, Conv conv, const char* path) {
  const size_t out = static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels);
  const auto bias = random_floats(rng, static_cast<size_t>(s.out_channels));
  const auto residual = random_floats(rng, out, -3.f, 3.f);
  Epilogue ep;
  ep.bias = uniform_int(rng, 0, 1) ? bias.data() : nullptr;
  // The engine fuses a residual only without an activation; the kernels add it after any.
  ep.activation = uniform_int(rng, 0, 2) ? Activation::kNone : Activation::kLeakyRelu;
  ep.alpha = 0.2f;
  for (int threads : {1, 2}) {
    std::vector<float> plain(out, NAN), fused(out, NAN);
    conv(ep, plain.data(), threads);
    Epilogue with = ep;
    with.residual = residual.data();
    conv(with, fused.data(), threads);
    ASSERT_TRUE(same_bits(fused, plus(plain, residual)))
        << path << " threads " << threads << " N" << s.batch << " " << s.h.in << "x" << s.w.in << "x" << s.in_channels << " -> "
        << s.out_channels << " k" << s.h.kernel << "x" << s.w.kernel << " s" << s.h.stride;
  }
}

TEST(Conv2DResidual, TrimmedBothPathsAddTheResidualAfterTheEpilogue) {
  std::mt19937 rng(35);
  for (int trial = 0; trial < 80; ++trial) {
    // Cin < 16: the gathered-taps path (tap_gather); else per-tap indirect GEMMs.
    const int64_t cin = trial % 2 ? uniform_int(rng, 1, 9) : uniform_int(rng, 16, 40);
    const ConvShape s = random_conv(rng, cin, uniform_int(rng, 1, 19));
    const auto x = random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * cin));
    const auto w = random_floats(rng, static_cast<size_t>(s.out_channels * cin * s.h.kernel * s.w.kernel));
    std::vector<float> packed(w.size());
    pack_conv2d_weights(s, w.data(), packed.data());
    std::vector<float> ws(static_cast<size_t>(std::max<int64_t>(1, conv2d_trimmed_workspace(s, 2))));
    expect_fused_equals_unfused(rng, s, [&](const Epilogue& ep, float* y, int threads) {
      conv2d_trimmed(s, packed.data(), x.data(), y, ep, threads, ws.data());
    }, cin < 16 ? "trimmed gathered" : "trimmed");
  }
}

TEST(Conv2DResidual, DepthwiseGroupedAndReferenceAddTheResidual) {
  std::mt19937 rng(36);
  for (int trial = 0; trial < 60; ++trial) {
    const int kind = trial % 3;  // 0: depthwise, 1: depthwise multiplier 2, 2: grouped
    const int64_t groups = kind == 2 ? uniform_int(rng, 2, 4) : uniform_int(rng, 1, 21);
    const int64_t cin = kind == 2 ? groups * uniform_int(rng, 1, 5) : groups;
    const int64_t cout = kind == 0 ? cin : kind == 1 ? 2 * cin : groups * uniform_int(rng, 1, 5);
    const ConvShape s = random_conv(rng, cin, cout);
    const auto x = random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * cin));
    const auto w = random_floats(rng, static_cast<size_t>(cout * (cin / groups) * s.h.kernel * s.w.kernel));
    std::vector<float> packed(w.size());
    pack_conv2d_grouped_weights(s, groups, w.data(), packed.data());
    if (conv2d_is_depthwise(s, groups)) {
      expect_fused_equals_unfused(rng, s, [&](const Epilogue& ep, float* y, int threads) {
        conv2d_depthwise(s, packed.data(), x.data(), y, ep, threads);
      }, "depthwise");
    } else {
      std::vector<float> ws(static_cast<size_t>(conv2d_grouped_workspace(s, groups, 2)));
      expect_fused_equals_unfused(rng, s, [&](const Epilogue& ep, float* y, int threads) {
        conv2d_grouped(s, groups, packed.data(), x.data(), y, ep, threads, ws.data());
      }, "grouped");
    }
    expect_fused_equals_unfused(rng, s, [&](const Epilogue& ep, float* y, int) {
      conv2d_grouped_reference(s, groups, x.data(), w.data(), y, ep);
    }, "grouped reference");
  }
}

TEST(GroupNormResidual, ApplyPassAddsTheResidualInPlaceOrNot) {
  std::mt19937 rng(37);
  for (int trial = 0; trial < 40; ++trial) {
    GroupNormShape s;
    s.batch = uniform_int(rng, 1, 3);
    s.pixels = trial % 4 == 0 ? 1 : trial % 4 == 1 ? uniform_int(rng, 250, 600) : uniform_int(rng, 2, 40);
    s.groups = uniform_int(rng, 1, 4);
    s.channels = s.groups * uniform_int(rng, 1, 6);
    const size_t count = static_cast<size_t>(s.batch * s.pixels * s.channels);
    const auto x = random_floats(rng, count, -2.f, 3.f);
    const auto residual = random_floats(rng, count, -3.f, 3.f);
    const auto scale = random_floats(rng, static_cast<size_t>(s.channels), -1.5f, 1.5f);
    const auto shift = random_floats(rng, static_cast<size_t>(s.channels));
    const Activation act = trial % 3 ? Activation::kNone : Activation::kTanh;
    for (int threads : {1, 2}) {
      std::vector<float> plain(count, NAN), fused(count, NAN);
      group_norm(s, x.data(), scale.data(), shift.data(), 1e-5f, plain.data(), act, 0.f, 0.f, nullptr, threads);
      group_norm(s, x.data(), scale.data(), shift.data(), 1e-5f, fused.data(), act, 0.f, 0.f, nullptr, threads, residual.data());
      const auto want = plus(plain, residual);
      ASSERT_TRUE(same_bits(fused, want)) << "trial " << trial << " threads " << threads;
      // In place (y == x), as the planner may run it.
      std::vector<float> in_place = x;
      group_norm(s, in_place.data(), scale.data(), shift.data(), 1e-5f, in_place.data(), act, 0.f, 0.f, nullptr, threads, residual.data());
      ASSERT_TRUE(same_bits(in_place, want)) << "in place, trial " << trial;
      // The reference adds it alike.
      std::vector<float> ref(count), ref_fused(count);
      group_norm_reference(s, x.data(), scale.data(), shift.data(), 1e-5f, ref.data(), act, 0.f);
      group_norm_reference(s, x.data(), scale.data(), shift.data(), 1e-5f, ref_fused.data(), act, 0.f, 0.f, residual.data());
      ASSERT_TRUE(same_bits(ref_fused, plus(ref, residual)));
      // Without an activation, y may even alias the residual (x + IN(x) run in place).
      if (act == Activation::kNone) {
        std::vector<float> all = x;
        group_norm(s, all.data(), scale.data(), shift.data(), 1e-5f, all.data(), act, 0.f, 0.f, nullptr, threads, all.data());
        ASSERT_TRUE(same_bits(all, plus(plain, x))) << "y == x == residual, trial " << trial;
      }
    }
  }
}

}  // namespace
}  // namespace edgegan::cpu
