// activation: the kernels against their definitions (and, for the backward, finite differences or the forward they invert).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels_cpu/activation/activation.h"
#include "kernels_cpu/activation/activation_run.h"
#include "kernels_cpu/common/cpu_isa.h"
#include "kernels_cpu/common/epilogue.h"
#include "kernels_cpu/elementwise/elementwise.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::max_abs_diff;
using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

TEST(Activation, MatchesDefinitions) {
  EXPECT_EQ(activate(-2.f, Activation::kRelu, 0), 0.f);
  EXPECT_EQ(activate(3.f, Activation::kRelu, 0), 3.f);
  EXPECT_FLOAT_EQ(activate(-2.f, Activation::kLeakyRelu, 0.2f), -0.4f);
  EXPECT_FLOAT_EQ(activate(0.5f, Activation::kTanh, 0), std::tanh(0.5f));
  EXPECT_FLOAT_EQ(activate(0.5f, Activation::kSigmoid, 0), 1.f / (1.f + std::exp(-0.5f)));
  EXPECT_EQ(activate(-7.f, Activation::kNone, 0), -7.f);
}

// The epilogue's branch-free tanh, against double-precision tanh over [-12, 12] (step
// 2^-14) and tiny arguments: within 6 float ulps, odd, exactly +-1 far out.
TEST(Activation, FastTanhIsWithinAFewUlpsOfTanh) {
  double worst_abs = 0, worst_rel = 0;
  auto check = [&](float x) {
    const double want = std::tanh(static_cast<double>(x)), got = fast_tanh(x);
    worst_abs = std::max(worst_abs, std::abs(got - want));
    if (std::abs(want) > 1e-30) worst_rel = std::max(worst_rel, std::abs(got - want) / std::abs(want));
    ASSERT_EQ(fast_tanh(-x), -fast_tanh(x)) << x;
  };
  for (int i = -12 * 16384; i <= 12 * 16384; ++i) check(static_cast<float>(i) / 16384.f);
  for (float x = 1e-30f; x < 1e-2f; x *= 1.01f) check(x);
  EXPECT_LT(worst_abs, 4e-7) << "max abs error";  // 6 float ulps near 1
  EXPECT_LT(worst_rel, 1e-6) << "max relative error";
  EXPECT_EQ(fast_tanh(20.f), 1.f);
  EXPECT_EQ(fast_tanh(-1e30f), -1.f);
}

// apply_activation's Tanh and Sigmoid (gathered few-channel pixels, strided wide rows,
// contiguous runs) against the scalar definitions, leaving the gaps between pixels alone.
TEST(Activation, ApplyActivationMatchesDefinitionsOnEveryLayout) {
  std::mt19937 rng(17);
  for (Activation a : {Activation::kTanh, Activation::kSigmoid, Activation::kRelu, Activation::kLeakyRelu})
    for (int64_t channels : {1, 3, 4, 15, 16, 40})
      for (int64_t gap : {0, 1, 5}) {
        const int64_t count = uniform_int(rng, 1, 700), stride = channels + gap;
        auto y = random_floats(rng, static_cast<size_t>(count * stride));
        for (float& v : y) v *= 6.f;
        const auto before = y;
        apply_activation(y.data(), count, channels, stride, a, 0.2f);
        for (int64_t i = 0; i < count * stride; ++i) {
          const float want = i % stride < channels ? activate(before[static_cast<size_t>(i)], a, 0.2f) : before[static_cast<size_t>(i)];
          ASSERT_NEAR(y[static_cast<size_t>(i)], want, 5e-7f) << "activation " << static_cast<int>(a) << ", " << channels << " channels, gap " << gap << ", i " << i;
        }
      }
}

TEST(ActivationBackward, MatchesDerivatives) {
  for (Activation a : {Activation::kRelu, Activation::kLeakyRelu, Activation::kTanh, Activation::kSigmoid, Activation::kNone})
    for (float x : {-2.3f, -0.7f, 0.4f, 1.9f}) {  // away from ReLU's kink
      const float y = activate(x, a, 0.2f);
      const double numeric = (static_cast<double>(activate(x + 1e-3f, a, 0.2f)) - activate(x - 1e-3f, a, 0.2f)) / 2e-3;
      float grad = 1.5f;  // dy
      activation_backward(1, &y, &grad, a, 0.2f);
      EXPECT_NEAR(grad, 1.5 * numeric, 2e-3) << "activation " << static_cast<int>(a) << " at " << x;
    }
}

// The activations with a second parameter, each with (alpha, beta) as the converter
// writes them: Elu(0.7), Selu(ONNX defaults), Clip(-0.5, 1.2), HardSigmoid(0.2, 0.5).
struct Param {
  Activation a;
  float alpha, beta;
};
constexpr Param kNewActivations[] = {
    {Activation::kElu, 0.7f, 0.f},         {Activation::kSelu, 1.6732632f, 1.050701f}, {Activation::kClip, -0.5f, 1.2f},
    {Activation::kHardSigmoid, 0.2f, 0.5f}, {Activation::kHardSwish, 0.f, 0.f},        {Activation::kSoftplus, 0.f, 0.f},
    {Activation::kMish, 0.f, 0.f},         {Activation::kGelu, 0.f, 0.f},              {Activation::kGeluTanh, 0.f, 0.f},
    {Activation::kSilu, 0.f, 0.f},
};

TEST(Activation, NewActivationsMatchTheirDefinitions) {
  EXPECT_FLOAT_EQ(activate(-1.f, Activation::kElu, 0.7f), 0.7f * std::expm1(-1.f));
  EXPECT_FLOAT_EQ(activate(2.f, Activation::kSelu, 1.5f, 1.1f), 2.2f);
  EXPECT_FLOAT_EQ(activate(3.f, Activation::kClip, 0.f, 6.f), 3.f);
  EXPECT_FLOAT_EQ(activate(7.f, Activation::kClip, 0.f, 6.f), 6.f);
  EXPECT_FLOAT_EQ(activate(1.f, Activation::kHardSigmoid, 0.2f, 0.5f), 0.7f);
  EXPECT_FLOAT_EQ(activate(1.f, Activation::kHardSwish, 0.f), 1.f * (1.f / 6.f + 0.5f));
  EXPECT_FLOAT_EQ(activate(0.f, Activation::kSoftplus, 0.f), std::log(2.f));
  EXPECT_NEAR(activate(1.f, Activation::kMish, 0.f), 1.f * std::tanh(std::log1p(std::exp(1.f))), 1e-7f);
  EXPECT_FLOAT_EQ(activate(100.f, Activation::kSoftplus, 0.f), 100.f);
  EXPECT_TRUE(activation_invertible(Activation::kClip));
  EXPECT_FALSE(activation_invertible(Activation::kHardSwish));
  EXPECT_FALSE(activation_invertible(Activation::kMish));
  // GELU(1) = Phi(1) = 0.8413447460685429; its tanh form 0.8411919906082768; SiLU(1) = 1 / (1 + e^-1).
  EXPECT_NEAR(activate(1.f, Activation::kGelu, 0.f), 0.8413447460685429f, 1e-7f);
  EXPECT_NEAR(activate(-2.f, Activation::kGelu, 0.f), -2.f * 0.022750131948179195f, 1e-7f);
  EXPECT_NEAR(activate(1.f, Activation::kGeluTanh, 0.f), 0.8411919906082768f, 1e-7f);
  EXPECT_NEAR(activate(1.f, Activation::kSilu, 0.f), 0.7310585786300049f, 1e-7f);
  EXPECT_EQ(activate(-200.f, Activation::kSilu, 0.f), 0.f);
  for (Activation a : {Activation::kGelu, Activation::kGeluTanh, Activation::kSilu}) EXPECT_FALSE(activation_invertible(a));
}

TEST(Activation, NewActivationsVectorisedMatchDefinitions) {
  std::mt19937 rng(18);
  for (const Param& p : kNewActivations)
    for (int64_t channels : {1, 3, 16, 37}) {
      const int64_t count = uniform_int(rng, 1, 300);
      auto y = random_floats(rng, static_cast<size_t>(count * channels));
      for (float& v : y) v *= 8.f;
      const auto before = y;
      apply_activation(y.data(), count, channels, channels, p.a, p.alpha, p.beta);
      std::vector<float> z(before.size());
      elementwise_activation(static_cast<int64_t>(before.size()), before.data(), z.data(), p.a, p.alpha, p.beta);
      for (size_t i = 0; i < y.size(); ++i) {
        const float want = activate(before[i], p.a, p.alpha, p.beta);
        ASSERT_NEAR(y[i], want, 2e-6f * (1.f + std::abs(want))) << "activation " << static_cast<int>(p.a) << " at " << before[i];
      }
      // The unfused pass gives what a fused epilogue gives.
      EXPECT_EQ(z, y);
      // The fused store applies the same functor.
      std::vector<float> stored(before.size());
      std::vector<float*> rows(static_cast<size_t>(count));
      for (int64_t r = 0; r < count; ++r) rows[static_cast<size_t>(r)] = stored.data() + r * channels;
      store_with_epilogue(before.data(), count, channels, rows.data(), nullptr, p.a, p.alpha, p.beta);
      EXPECT_EQ(stored, y);
    }
}

// PRelu with a slope per channel (a fused PRelu's epilogue): over contiguous pixels
// (runs of pixels against repeated slopes, then a remainder) and strided ones, and in the
// fused store, exactly the definition with each channel's slope.
TEST(Activation, PReluPerChannelMatchesDefinitionOnEveryLayout) {
  std::mt19937 rng(21);
  for (int64_t channels : {1, 3, 12, 16, 56, 64, 65, 130}) {
    const auto slope = random_floats(rng, static_cast<size_t>(channels), 0.05f, 0.6f);
    for (int64_t count : {int64_t{1}, int64_t{21}, int64_t{uniform_int(rng, 2, 700)}}) {
      SCOPED_TRACE(std::to_string(channels) + " channels, " + std::to_string(count) + " pixels");
      const auto x = random_floats(rng, static_cast<size_t>(count * channels));
      std::vector<float> want(x.size());
      for (size_t i = 0; i < x.size(); ++i) want[i] = activate(x[i], Activation::kPRelu, slope[i % static_cast<size_t>(channels)]);
      auto y = x;
      apply_activation(y.data(), count, channels, channels, Activation::kPRelu, 0.01f, 0.f, slope.data());
      ASSERT_EQ(y, want);
      std::vector<float> strided(static_cast<size_t>(count * (channels + 2)), 7.f);
      for (int64_t p = 0; p < count; ++p) std::copy_n(x.begin() + p * channels, channels, strided.begin() + p * (channels + 2));
      apply_activation(strided.data(), count, channels, channels + 2, Activation::kPRelu, 0.01f, 0.f, slope.data());
      for (int64_t p = 0; p < count; ++p) {
        ASSERT_TRUE(std::equal(want.begin() + p * channels, want.begin() + (p + 1) * channels, strided.begin() + p * (channels + 2)));
        ASSERT_EQ(strided[static_cast<size_t>(p * (channels + 2) + channels)], 7.f);
      }
      std::vector<float> stored(x.size());
      std::vector<float*> rows(static_cast<size_t>(count));
      for (int64_t r = 0; r < count; ++r) rows[static_cast<size_t>(r)] = stored.data() + r * channels;
      store_with_epilogue(x.data(), count, channels, rows.data(), nullptr, Activation::kPRelu, 0.01f, 0.f, slope.data());
      ASSERT_EQ(stored, want);
    }
  }
}

// Tanh and Sigmoid run on the widest family the CPU has (activation_run.h): on each,
// within the definitions' tolerance, and the fused store, the unfused pass on 1 and 3
// threads and strided pixels all give apply_activation's bits.
TEST(Activation, TanhAndSigmoidOnEveryFamilyMatchDefinitionsAndEachOther) {
  std::mt19937 rng(20);
  for (Isa isa : kAllIsas) {
    if (!isa_supported(isa)) continue;
    ScopedIsa forced(isa);
    SCOPED_TRACE(isa_name(isa));
#if defined(EDGEGAN_HAVE_X86_KERNELS)
    EXPECT_EQ(wide_activation_run(Activation::kTanh) != nullptr, isa == Isa::kAvx2 || isa == Isa::kAvx512);
#endif
    for (Activation a : {Activation::kTanh, Activation::kSigmoid})
      for (int64_t channels : {1, 9, 64, 67}) {
        const int64_t count = uniform_int(rng, 1, 400);
        auto x = random_floats(rng, static_cast<size_t>(count * channels));
        for (float& v : x) v *= 10.f;
        auto y = x;
        apply_activation(y.data(), count, channels, channels, a, 0.2f);
        for (size_t i = 0; i < y.size(); ++i) {
          const float want = activate(x[i], a, 0.2f);
          ASSERT_NEAR(y[i], want, 2e-6f * (1.f + std::abs(want))) << "activation " << static_cast<int>(a) << " at " << x[i];
        }
        std::vector<float> stored(x.size());
        std::vector<float*> rows(static_cast<size_t>(count));
        for (int64_t r = 0; r < count; ++r) rows[static_cast<size_t>(r)] = stored.data() + r * channels;
        store_with_epilogue(x.data(), count, channels, rows.data(), nullptr, a, 0.2f);
        EXPECT_EQ(stored, y);
        for (int threads : {1, 3}) {
          std::vector<float> z(x.size());
          elementwise_activation(static_cast<int64_t>(x.size()), x.data(), z.data(), a, 0.2f, 0.f, threads);
          EXPECT_EQ(z, y) << threads << " threads";
        }
        // Pixels one channel wider than their values (a block of a wider map).
        std::vector<float> strided(static_cast<size_t>(count * (channels + 1)), 7.f);
        for (int64_t p = 0; p < count; ++p)
          std::copy_n(x.begin() + p * channels, channels, strided.begin() + p * (channels + 1));
        apply_activation(strided.data(), count, channels, channels + 1, a, 0.2f);
        for (int64_t p = 0; p < count; ++p) {
          ASSERT_TRUE(std::equal(y.begin() + p * channels, y.begin() + (p + 1) * channels, strided.begin() + p * (channels + 1)));
          ASSERT_EQ(strided[static_cast<size_t>(p * (channels + 1) + channels)], 7.f);
        }
      }
  }
}

// The unfused pass over many blocks, on several threads, in place and not: the same
// values as one apply_activation over the whole array, for every activation.
TEST(Activation, ElementwisePassMatchesApplyActivationAcrossBlocksAndThreads) {
  std::mt19937 rng(19);
  for (int a = 0; a < kActivationCount; ++a)
    for (int threads : {1, 3}) {
      const int64_t count = uniform_int(rng, 1, 70000);
      auto x = random_floats(rng, static_cast<size_t>(count));
      for (float& v : x) v *= 8.f;
      const auto act = static_cast<Activation>(a);
      const float alpha = act == Activation::kClip ? -0.5f : 0.2f, beta = act == Activation::kClip ? 0.7f : 1.05f;
      auto want = x;
      apply_activation(want.data(), 1, count, count, act, alpha, beta);
      std::vector<float> y(x.size());
      elementwise_activation(count, x.data(), y.data(), act, alpha, beta, threads);
      ASSERT_EQ(y, want) << "activation " << a << ", " << count << " values, " << threads << " threads";
      elementwise_activation(count, x.data(), x.data(), act, alpha, beta, threads);
      ASSERT_EQ(x, want) << "in place, activation " << a;
    }
}

TEST(ActivationBackward, NewActivationsMatchDerivatives) {
  for (const Param& p : kNewActivations)
    for (float x : {-3.7f, -2.3f, -0.7f, -0.2f, 0.4f, 0.8f, 1.9f, 4.2f}) {  // away from the kinks at -3, -0.5, 0, 1.2, 2.5 and 3
      const double numeric =
          (static_cast<double>(activate(x + 1e-3f, p.a, p.alpha, p.beta)) - activate(x - 1e-3f, p.a, p.alpha, p.beta)) / 2e-3;
      float from_input = 1.5f;
      activation_backward_from_input(1, &x, &from_input, p.a, p.alpha, p.beta);
      EXPECT_NEAR(from_input, 1.5 * numeric, 3e-3) << "from input: activation " << static_cast<int>(p.a) << " at " << x;
      if (!activation_invertible(p.a)) continue;
      const float y = activate(x, p.a, p.alpha, p.beta);
      float from_output = 1.5f;
      activation_backward(1, &y, &from_output, p.a, p.alpha, p.beta);
      EXPECT_NEAR(from_output, 1.5 * numeric, 3e-3) << "from output: activation " << static_cast<int>(p.a) << " at " << x;
    }
}

}  // namespace
}  // namespace edgegan::cpu
