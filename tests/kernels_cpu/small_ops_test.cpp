// Dense, embedding, concat, layout transforms, activations against plain loops.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "kernels_cpu/dense/dense.h"
#include "kernels_cpu/common/epilogue.h"
#include "kernels_cpu/channel_affine/channel_affine.h"
#include "kernels_cpu/concat/concat.h"
#include "kernels_cpu/elementwise/elementwise.h"
#include "kernels_cpu/embedding/embedding.h"
#include "kernels_cpu/reshape/reshape.h"
#include "tests/test_util.h"
#include "kernels_cpu/activation/activation.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::max_abs_diff;
using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

TEST(Dense, MatchesReferenceForAwkwardSizes) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 60; ++trial) {
    const int64_t rows = uniform_int(rng, 1, 9), in = uniform_int(rng, 1, 70), out = uniform_int(rng, 1, 200);
    const auto x = random_floats(rng, static_cast<size_t>(rows * in));
    const auto w = random_floats(rng, static_cast<size_t>(in * out));
    const auto b = random_floats(rng, static_cast<size_t>(out));
    Epilogue ep{trial % 2 ? b.data() : nullptr, static_cast<Activation>(trial % 5), 0.1f};
    std::vector<float> ref(static_cast<size_t>(rows * out)), y(ref.size(), NAN);
    dense_reference(rows, in, out, x.data(), w.data(), ref.data(), ep);
    dense(rows, in, out, x.data(), w.data(), y.data(), ep, 2);
    ASSERT_LE(max_abs_diff(y, ref), 1e-5f) << rows << "x" << in << "->" << out;
  }
}

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

TEST(Embedding, CopiesRows) {
  const std::vector<float> table = {0, 1, 10, 11, 20, 21};
  const std::vector<int64_t> idx = {2, 0, 2};
  std::vector<float> y(6);
  embedding_lookup(3, idx.data(), 2, table.data(), y.data());
  EXPECT_EQ(y, (std::vector<float>{20, 21, 0, 1, 20, 21}));
}

TEST(Concat, InterleavesChunksPerOuterIndex) {
  const std::vector<float> a = {1, 2, 3, 4}, b = {5, 6};  // a: [2 x 2], b: [2 x 1]
  std::vector<float> y(6);
  concat(2, {a.data(), b.data()}, {2, 1}, y.data());
  EXPECT_EQ(y, (std::vector<float>{1, 2, 5, 3, 4, 6}));
}

TEST(Layout, NchwNhwcRoundTrip) {
  std::mt19937 rng(5);
  const auto x = random_floats(rng, 2 * 3 * 4 * 5);
  std::vector<float> nhwc(x.size()), back(x.size());
  nchw_to_nhwc(2, 3, 4, 5, x.data(), nhwc.data());
  EXPECT_EQ(nhwc[((1 * 4 + 2) * 5 + 3) * 3 + 1], x[((1 * 3 + 1) * 4 + 2) * 5 + 3]);
  nhwc_to_nchw(2, 3, 4, 5, nhwc.data(), back.data());
  EXPECT_EQ(back, x);
}

TEST(ChannelAffine, ScalesAndShiftsPerChannel) {
  const std::vector<float> x = {1, 2, 3, 4}, scale = {2, -1}, shift = {0.5f, 1};
  std::vector<float> y(4);
  channel_affine(2, 2, scale.data(), shift.data(), x.data(), y.data(), Activation::kRelu, 0);
  EXPECT_EQ(y, (std::vector<float>{2.5f, 0, 6.5f, 0}));
}

}  // namespace
}  // namespace edgegan::cpu
