// GroupNorm's converter rules: InstanceNormalization, GroupNormalization (opset 18's
// per-group and opset 21's per-channel parameters), torch's Reshape pattern for
// nn.GroupNorm fused into one op with its Mul, Add and activation; every refused
// attribute or form is an error naming the node.
#include <gtest/gtest.h>

#include <cmath>

#include "converter/converter.h"
#include "edgegan/edgegan.h"
#include "kernels_cpu/group_norm/group_norm.h"
#include "tests/converter/convert_error.h"
#include "tests/converter/onnx_builder.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

using converter::convert_onnx;
using converter::ConvertError;
using testing::max_abs_diff;
using testing::OnnxBuilder;
using testing::random_floats;

using testing::convert_error;

constexpr int64_t kC = 8, kH = 3, kW = 5;

// torch 1.13's export of nn.GroupNorm(groups, 8) on [N, 8, 3, 5], then LeakyRelu(0.2).
// With affine=False torch multiplies by a [1,1,1] one and adds a [1,1,1] zero: gamma and beta of one value.
void torch_group_norm(OnnxBuilder& b, int64_t groups, const std::vector<float>& gamma, const std::vector<float>& beta) {
  b.input("x", {-1, kC, kH, kW}).output("y");
  b.ints("to_groups", {3}, {0, groups, -1}).ints("back", {4}, {0, kC, kH, kW});
  b.floats("ones", {groups}, std::vector<float>(static_cast<size_t>(groups), 1.f));
  b.floats("zeros", {groups}, std::vector<float>(static_cast<size_t>(groups), 0.f));
  const int64_t c = static_cast<int64_t>(gamma.size());
  b.floats("gamma", {c, 1, 1}, gamma).floats("beta", {c, 1, 1}, beta);
  b.node("Reshape", "r1", {"x", "to_groups"}, {"g"});
  OnnxBuilder::attr(b.node("InstanceNormalization", "in", {"g", "ones", "zeros"}, {"n"}), "epsilon", 1e-5f);
  b.node("Reshape", "r2", {"n", "back"}, {"m"});
  b.node("Mul", "mul", {"m", "gamma"}, {"s"});
  b.node("Add", "add", {"s", "beta"}, {"a"});
  OnnxBuilder::attr(b.node("LeakyRelu", "act", {"a"}, {"y"}), "alpha", 0.2f);
}

// y of the model on a random NHWC batch of 2, and the kernel reference's.
void expect_group_norm(const std::shared_ptr<const Model>& model, int64_t groups, const std::vector<float>& scale, const std::vector<float>& shift,
                       float eps, cpu::Activation act, float alpha) {
  std::mt19937 rng(5);
  const auto x = random_floats(rng, 2 * kH * kW * kC, -2.f, 3.f);
  Session s(model, {.batch = 2});
  const auto y = s.run({Tensor{"x", DType::kFloat32, Layout::kNHWC, {2, kH, kW, kC}, x, {}}})[0];
  std::vector<float> ref(x.size());
  cpu::group_norm_reference({2, kH * kW, kC, groups}, x.data(), scale.data(), shift.data(), eps, ref.data(), act, alpha);
  EXPECT_LE(max_abs_diff(y.f32, ref), 1e-5f);
}

TEST(GroupNormConverter, FusesTorchGroupNormPatternWithMulAddAndActivation) {
  std::mt19937 rng(1);
  const auto gamma = random_floats(rng, kC, 0.5f, 2.f), beta = random_floats(rng, kC);
  for (int64_t groups : {int64_t{1}, int64_t{2}, kC}) {
    SCOPED_TRACE(groups);
    OnnxBuilder b;
    torch_group_norm(b, groups, gamma, beta);
    const auto model = Model::from_bytes(convert_onnx(b.bytes(), "gn.onnx").egan);
    ASSERT_EQ(model->ops().size(), 1u);
    EXPECT_EQ(model->ops()[0].kind, "GroupNorm");
    EXPECT_EQ(model->ops()[0].name, "r1+in+mul+add+act");
    EXPECT_NE(model->ops()[0].attributes.find("leaky_relu(0.2)"), std::string::npos) << model->ops()[0].attributes;
    expect_group_norm(model, groups, gamma, beta, 1e-5f, cpu::Activation::kLeakyRelu, 0.2f);
  }
}

TEST(GroupNormConverter, FusesTorchGroupNormWithoutAffineParameters) {
  OnnxBuilder b;
  torch_group_norm(b, 4, {2.f}, {0.5f});
  const auto model = Model::from_bytes(convert_onnx(b.bytes(), "gn.onnx").egan);
  ASSERT_EQ(model->ops().size(), 1u);
  expect_group_norm(model, 4, std::vector<float>(kC, 2.f), std::vector<float>(kC, 0.5f), 1e-5f, cpu::Activation::kLeakyRelu, 0.2f);
}

TEST(GroupNormConverter, UnfusedPatternStillConverts) {
  // The normalised map is also a graph output: the Mul and Add cannot fold into the
  // GroupNorm, which keeps ones and zeros; they become one ChannelAffine op (the Add
  // folds into the Mul's).
  std::mt19937 rng(2);
  const auto gamma = random_floats(rng, kC, 0.5f, 2.f), beta = random_floats(rng, kC);
  OnnxBuilder b;
  torch_group_norm(b, 2, gamma, beta);
  b.output("m");
  const auto model = Model::from_bytes(convert_onnx(b.bytes(), "gn.onnx").egan);
  ASSERT_EQ(model->ops().size(), 2u);
  EXPECT_EQ(model->ops()[0].kind, "GroupNorm");
  EXPECT_EQ(model->ops()[1].kind, "ChannelAffine");
  expect_group_norm(model, 2, gamma, beta, 1e-5f, cpu::Activation::kLeakyRelu, 0.2f);
}

TEST(GroupNormConverter, InstanceAndGroupNormalizationOfEveryOpset) {
  std::mt19937 rng(3);
  const auto scale = random_floats(rng, kC, 0.5f, 2.f), shift = random_floats(rng, kC);
  {  // InstanceNormalization + Relu
    OnnxBuilder b;
    b.input("x", {-1, kC, kH, kW}).output("y").floats("s", {kC}, scale).floats("b", {kC}, shift);
    OnnxBuilder::attr(b.node("InstanceNormalization", "in", {"x", "s", "b"}, {"n"}), "epsilon", 1e-3f);
    b.node("Relu", "relu", {"n"}, {"y"});
    const auto model = Model::from_bytes(convert_onnx(b.bytes(), "in.onnx").egan);
    ASSERT_EQ(model->ops().size(), 1u);
    EXPECT_EQ(model->ops()[0].attributes, "8 channels instance eps 0.001 relu");
    expect_group_norm(model, kC, scale, shift, 1e-3f, cpu::Activation::kRelu, 0.f);
  }
  for (int opset : {18, 21}) {  // GroupNormalization, 4 groups: opset 18 takes 4 values, opset 21 takes 8
    SCOPED_TRACE(opset);
    const int64_t count = opset == 18 ? 4 : kC;
    const auto s = random_floats(rng, static_cast<size_t>(count), 0.5f, 2.f), t = random_floats(rng, static_cast<size_t>(count));
    OnnxBuilder b(opset);
    b.input("x", {-1, kC, kH, kW}).output("y").floats("s", {count}, s).floats("b", {count}, t);
    auto& n = b.node("GroupNormalization", "gn", {"x", "s", "b"}, {"y"});
    OnnxBuilder::attr(n, "num_groups", int64_t{4});
    if (opset == 21) OnnxBuilder::attr(n, "stash_type", int64_t{1});
    const auto model = Model::from_bytes(convert_onnx(b.bytes(), "gn.onnx").egan);
    ASSERT_EQ(model->ops().size(), 1u);
    EXPECT_EQ(model->ops()[0].attributes, "8 channels 4 groups eps 1e-05");
    std::vector<float> scale_c(kC), shift_c(kC);
    for (int64_t c = 0; c < kC; ++c) {
      scale_c[static_cast<size_t>(c)] = s[static_cast<size_t>(opset == 18 ? c / 2 : c)];
      shift_c[static_cast<size_t>(c)] = t[static_cast<size_t>(opset == 18 ? c / 2 : c)];
    }
    expect_group_norm(model, 4, scale_c, shift_c, 1e-5f, cpu::Activation::kNone, 0.f);
  }
}

struct ErrorCase {
  const char* name;
  std::function<void(OnnxBuilder&)> build;
  std::vector<std::string> expected;  // every string must appear in the message
};

void group_normalization(OnnxBuilder& b, const std::vector<int64_t>& dims, int64_t groups, int64_t values,
                         const std::function<void(onnx::NodeProto&)>& attrs = {}) {
  b.input("x", dims).output("y");
  b.floats("s", {values}, std::vector<float>(static_cast<size_t>(values), 1.f)).floats("b", {values}, std::vector<float>(static_cast<size_t>(values), 0.f));
  auto& n = b.node("GroupNormalization", "gn", {"x", "s", "b"}, {"y"});
  OnnxBuilder::attr(n, "num_groups", groups);
  if (attrs) attrs(n);
}

TEST(GroupNormConverter, RefusedFormsAreNamedErrors) {
  const std::vector<ErrorCase> cases = {
      {"stash_type", [](OnnxBuilder& b) {
         group_normalization(b, {-1, 8, 2, 2}, 2, 8, [](onnx::NodeProto& n) { OnnxBuilder::attr(n, "stash_type", int64_t{10}); });
       }, {"gn", "GroupNormalization", "'stash_type' = 10"}},
      {"groups do not divide", [](OnnxBuilder& b) { group_normalization(b, {-1, 8, 2, 2}, 3, 8); }, {"gn", "'num_groups' = 3"}},
      {"groups missing", [](OnnxBuilder& b) {
         b.input("x", {-1, 8, 2, 2}).output("y").floats("s", {8}, std::vector<float>(8, 1.f)).floats("b", {8}, std::vector<float>(8, 0.f));
         b.node("GroupNormalization", "gn", {"x", "s", "b"}, {"y"});
       }, {"gn", "'num_groups' is missing"}},
      {"parameters neither per group nor per channel", [](OnnxBuilder& b) { group_normalization(b, {-1, 8, 2, 2}, 2, 4); },
       {"gn", "4 values", "one per group"}},
      {"rank-3 GroupNormalization", [](OnnxBuilder& b) { group_normalization(b, {-1, 8, 4}, 2, 8); }, {"gn", "rank-3"}},
      {"unknown attribute", [](OnnxBuilder& b) {
         group_normalization(b, {-1, 8, 2, 2}, 2, 8, [](onnx::NodeProto& n) { OnnxBuilder::attr(n, "fancy", int64_t{1}); });
       }, {"gn", "'fancy'"}},
      {"negative epsilon", [](OnnxBuilder& b) {
         group_normalization(b, {-1, 8, 2, 2}, 2, 8, [](onnx::NodeProto& n) { OnnxBuilder::attr(n, "epsilon", -1.f); });
       }, {"gn", "'epsilon'"}},
      {"rank-5 InstanceNormalization", [](OnnxBuilder& b) {
         b.input("x", {-1, 2, 2, 2, 2}).output("y").floats("s", {2}, {1, 1}).floats("b", {2}, {0, 0});
         b.node("InstanceNormalization", "in", {"x", "s", "b"}, {"y"});
       }, {"in", "InstanceNormalization", "rank-5"}},
      {"InstanceNormalization scale size", [](OnnxBuilder& b) {
         b.input("x", {-1, 2, 2, 2}).output("y").floats("s", {3}, {1, 1, 1}).floats("b", {2}, {0, 0});
         b.node("InstanceNormalization", "in", {"x", "s", "b"}, {"y"});
       }, {"in", "'s'", "one value per channel"}},
      {"run-time scale", [](OnnxBuilder& b) {
         b.input("x", {-1, 2, 2, 2}).input("s", {-1, 2}).output("y").floats("b", {2}, {0, 0});
         b.node("InstanceNormalization", "in", {"x", "s", "b"}, {"y"});
       }, {"in", "scale must be a constant"}},
      {"rank-3 InstanceNormalization alone", [](OnnxBuilder& b) {
         b.input("x", {-1, 2, 6}).output("y").floats("s", {2}, {1, 1}).floats("b", {2}, {0, 0});
         b.node("InstanceNormalization", "in", {"x", "s", "b"}, {"y"});
       }, {"in", "rank-3", "nn.GroupNorm"}},
      {"torch pattern with its grouped map read twice", [](OnnxBuilder& b) {
         torch_group_norm(b, 2, std::vector<float>(kC, 1.f), std::vector<float>(kC, 0.f));
         b.output("g");
       }, {"'in'", "nn.GroupNorm", "not such a Reshape"}},
      {"torch pattern whose normalised groups are an output", [](OnnxBuilder& b) {
         torch_group_norm(b, 2, std::vector<float>(kC, 1.f), std::vector<float>(kC, 0.f));
         b.output("n");
       }, {"'in'", "nn.GroupNorm", "read by one reshape only"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    OnnxBuilder b(21);
    c.build(b);
    const std::string error = convert_error(b.bytes());
    ASSERT_FALSE(error.empty()) << "converted without an error";
    for (const auto& needle : c.expected) EXPECT_NE(error.find(needle), std::string::npos) << "message: " << error;
  }
}

}  // namespace
}  // namespace edgegan
