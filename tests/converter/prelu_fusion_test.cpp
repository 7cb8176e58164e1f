// A PRelu with constant positive slopes (one, or one per channel) whose input only a
// Conv or ConvTranspose produces folds into that op's epilogue (activation PRelu, the
// slopes in Epilogue.slope): no pass of its own. Other PRelus stay PRelu ops. The fused
// models compute what the unfused graph does.
#include <gtest/gtest.h>

#include <algorithm>

#include "converter/converter.h"
#include "edgegan/edgegan.h"
#include "tests/converter/converted_model.h"
#include "tests/converter/converter_test_util.h"
#include "tests/converter/onnx_builder.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

using testing::converted_model;
using testing::max_abs_diff;
using testing::nhwc;
using testing::op_kinds;
using testing::OnnxBuilder;
using testing::random_floats;


// A PRelu slope initialiser: per channel ([C,1,1], values in [0.05, 0.6]) or one value.
void slope(OnnxBuilder& b, const std::string& name, int64_t channels, bool per_channel, std::mt19937& rng) {
  if (per_channel) b.floats(name, {channels, 1, 1}, random_floats(rng, static_cast<size_t>(channels), 0.05f, 0.6f));
  else b.floats(name, {1}, random_floats(rng, 1, 0.05f, 0.6f));
}

// y = PRelu(conv(x)) on 3 -> 5 channels, 3x3, pads 1.
std::string conv_prelu(bool per_channel, float slope_sign, std::mt19937& rng) {
  OnnxBuilder b;
  b.input("x", {-1, 3, 6, 7}).output("y");
  b.floats("W", {5, 3, 3, 3}, random_floats(rng, 5 * 3 * 9)).floats("B", {5}, random_floats(rng, 5));
  slope(b, "s", 5, per_channel, rng);
  OnnxBuilder::attr(b.node("Conv", "conv", {"x", "W", "B"}, {"c"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
  if (slope_sign < 0) b.floats("s", {1}, {-0.25f});
  b.node("PRelu", "pr", {"c", "s"}, {"y"});
  return b.bytes();
}

TEST(PReluFusion, ConvThenPReluBecomesOneConv) {
  for (bool per_channel : {true, false}) {
    SCOPED_TRACE(per_channel ? "per channel" : "one slope");
    std::mt19937 rng(5);
    const auto model = converted_model(conv_prelu(per_channel, 1.f, rng));
    EXPECT_EQ(op_kinds(*model), std::vector<std::string>{"Conv2D"});
    EXPECT_EQ(model->ops()[0].name, "conv+pr");
    EXPECT_NE(model->ops()[0].attributes.find("prelu"), std::string::npos) << model->ops()[0].attributes;
  }
}

// A negative slope's gradient would not follow from the output: it stays its own op.
TEST(PReluFusion, NegativeSlopeStaysAPReluOp) {
  std::mt19937 rng(6);
  const auto model = converted_model(conv_prelu(false, -1.f, rng));
  EXPECT_EQ(op_kinds(*model), (std::vector<std::string>{"Conv2D", "PRelu"}));
}

// The transposed convolution's epilogue takes it too; a PRelu on a graph input has no producer.
TEST(PReluFusion, ConvTransposeTakesItAndAGraphInputDoesNot) {
  std::mt19937 rng(7);
  OnnxBuilder b;
  b.input("x", {-1, 4, 5, 5}).output("y");
  b.floats("W", {4, 6, 4, 4}, random_floats(rng, 4 * 6 * 16));
  slope(b, "s0", 4, true, rng);
  slope(b, "s1", 6, true, rng);
  b.node("PRelu", "pr0", {"x", "s0"}, {"p"});
  auto& t = b.node("ConvTranspose", "up", {"p", "W"}, {"c"});
  OnnxBuilder::attr(t, "strides", std::vector<int64_t>{2, 2});
  OnnxBuilder::attr(t, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("PRelu", "pr1", {"c", "s1"}, {"y"});
  const auto model = converted_model(b.bytes());
  EXPECT_EQ(op_kinds(*model), (std::vector<std::string>{"PRelu", "ConvTranspose2D"}));
  EXPECT_EQ(model->ops()[1].name, "up+pr1");
}

// FSRCNN's shape (Dong et al. 2016) at d = 56, s = 12, m = 2 on a small luma plane:
// 5x5 1->d, 1x1 d->s, m x (3x3 s->s), 1x1 s->d, each with a PRelu (per channel, one
// layer with a single slope), then a 9x9 stride-3 transposed convolution to 1 channel.
// With `expose`, every convolution's output is also a graph output: a second reader,
// so no PRelu fuses (the reference).
std::string fsrcnn_like(bool expose) {
  std::mt19937 rng(11);
  OnnxBuilder b;
  b.input("x", {-1, 1, 23, 29}).output("y");
  struct Layer { int64_t cin, cout, k; };
  const Layer layers[] = {{1, 56, 5}, {56, 12, 1}, {12, 12, 3}, {12, 12, 3}, {12, 56, 1}};
  std::string at = "x";
  for (size_t i = 0; i < std::size(layers); ++i) {
    const Layer& l = layers[i];
    const std::string n = std::to_string(i);
    const float gain = 1.f / std::sqrt(static_cast<float>(l.cin * l.k * l.k));
    auto w = random_floats(rng, static_cast<size_t>(l.cout * l.cin * l.k * l.k), -gain, gain);
    b.floats("W" + n, {l.cout, l.cin, l.k, l.k}, w).floats("B" + n, {l.cout}, random_floats(rng, static_cast<size_t>(l.cout), -0.1f, 0.1f));
    slope(b, "S" + n, l.cout, i != 2, rng);
    const int64_t p = l.k / 2;
    OnnxBuilder::attr(b.node("Conv", "conv" + n, {at, "W" + n, "B" + n}, {"c" + n}), "pads", std::vector<int64_t>{p, p, p, p});
    if (expose) b.output("c" + n);
    b.node("PRelu", "pr" + n, {"c" + n, "S" + n}, {"a" + n});
    at = "a" + n;
  }
  b.floats("WT", {56, 1, 9, 9}, random_floats(rng, 56 * 81, -0.05f, 0.05f)).floats("BT", {1}, {0.02f});
  auto& t = b.node("ConvTranspose", "deconv", {at, "WT", "BT"}, {"y"});
  OnnxBuilder::attr(t, "strides", std::vector<int64_t>{3, 3});
  OnnxBuilder::attr(t, "pads", std::vector<int64_t>{4, 4, 4, 4});
  OnnxBuilder::attr(t, "output_padding", std::vector<int64_t>{2, 2});
  return b.bytes();
}

TEST(PReluFusion, FsrcnnLikeModelMatchesTheUnfusedGraphAndIsBitIdenticalAcrossThreads) {
  const auto fused = converted_model(fsrcnn_like(false));
  const auto unfused = converted_model(fsrcnn_like(true));
  const auto k = op_kinds(*fused);
  EXPECT_EQ(std::count(k.begin(), k.end(), "PRelu"), 0);
  EXPECT_EQ(std::count(k.begin(), k.end(), "Conv2D"), 5);
  const auto ku = op_kinds(*unfused);
  EXPECT_EQ(std::count(ku.begin(), ku.end(), "PRelu"), 5);
  std::mt19937 rng(12);
  const int64_t batch = 2;
  const auto x = random_floats(rng, static_cast<size_t>(batch * 23 * 29), 0.f, 1.f);
  Session ref(unfused, {.threads = 1, .batch = 2});
  const auto want = ref.run({nhwc("x", batch, 23, 29, 1, x)})[0];
  ASSERT_EQ(want.shape, (std::vector<int64_t>{batch, 69, 87, 1}));
  std::vector<float> one_thread;
  for (int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    Session s(fused, {.threads = threads, .batch = 2});
    const auto y = s.run({nhwc("x", batch, 23, 29, 1, x)})[0];
    ASSERT_EQ(y.shape, want.shape);
    EXPECT_LE(max_abs_diff(y.f32, want.f32), 1e-5f);
    if (threads == 1) {
      one_thread = y.f32;
    } else {
      EXPECT_EQ(y.f32, one_thread);  // bit for bit
    }
  }
}

}  // namespace
}  // namespace edgegan
