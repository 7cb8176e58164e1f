// Converter rules: BatchNorm folding is exact, every unsupported op or attribute
// is an error naming the node, op and attribute, metadata survives the trip.
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <functional>

#include "converter/converter.h"
#include "edgegan/edgegan.h"
#include "kernels_cpu/conv2d/conv2d_trimmed.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_split.h"
#include "tests/converter/convert_error.h"
#include "tests/converter/onnx_builder.h"
#include "tests/test_util.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_reference.h"
#include "kernels_cpu/conv2d/conv2d_reference.h"
#include "kernels_cpu/conv2d/conv2d_grouped.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_grouped.h"

namespace edgegan {
namespace {

using converter::convert_onnx;
using converter::ConvertError;
using testing::max_abs_diff;
using testing::OnnxBuilder;
using testing::random_floats;

using testing::convert_error;

struct BnParams {
  std::vector<float> gamma, beta, mean, var;
};

BnParams random_bn(std::mt19937& rng, int c) {
  return {random_floats(rng, c, 0.5f, 2.f), random_floats(rng, c), random_floats(rng, c), random_floats(rng, c, 0.1f, 3.f)};
}

void add_bn(OnnxBuilder& b, const std::string& in, const std::string& out, const BnParams& p, float eps) {
  const int64_t c = static_cast<int64_t>(p.gamma.size());
  b.floats("gamma", {c}, p.gamma).floats("beta", {c}, p.beta).floats("mean", {c}, p.mean).floats("var", {c}, p.var);
  OnnxBuilder::attr(b.node("BatchNormalization", "bn", {in, "gamma", "beta", "mean", "var"}, {out}), "epsilon", eps);
}

// The unfused computation in double precision.
float bn_ref(float v, const BnParams& p, int64_t c, float eps) {
  return static_cast<float>((v - p.mean[c]) / std::sqrt(static_cast<double>(p.var[c]) + eps) * p.gamma[c] + p.beta[c]);
}

TEST(Converter, FoldsBatchNormIntoConvTransposeExactly) {
  std::mt19937 rng(1);
  const int cin = 5, cout = 3, k = 4;
  const auto w = random_floats(rng, cin * cout * k * k), bias = random_floats(rng, cout);
  const BnParams bn = random_bn(rng, cout);
  OnnxBuilder b;
  b.input("x", {-1, cin, 3, 4}).output("y").floats("W", {cin, cout, k, k}, w).floats("B", {cout}, bias);
  auto& ct = b.node("ConvTranspose", "deconv", {"x", "W", "B"}, {"t"});
  OnnxBuilder::attr(ct, "strides", std::vector<int64_t>{2, 2});
  OnnxBuilder::attr(ct, "pads", std::vector<int64_t>{1, 1, 1, 1});
  add_bn(b, "t", "y", bn, 1e-3f);
  const auto result = convert_onnx(b.bytes(), "bn.onnx");
  EXPECT_NE(result.summary.find("1 BatchNorm folded"), std::string::npos) << result.summary;
  const auto model = Model::from_bytes(result.egan);
  ASSERT_EQ(model->ops().size(), 1u);

  Session s(model, {.batch = 2});
  const auto x = random_floats(rng, 2 * 3 * 4 * cin);  // NHWC
  const auto y = s.run({Tensor{"x", DType::kFloat32, Layout::kNHWC, {2, 3, 4, cin}, x, {}}})[0];
  cpu::ConvShape shape{2, cin, cout, {3, k, 2, 1, 1, 1, 6}, {4, k, 2, 1, 1, 1, 8}};
  std::vector<float> ref(y.f32.size());
  cpu::Epilogue ep{bias.data(), cpu::Activation::kNone, 0};
  cpu::conv_transpose2d_reference(shape, x.data(), w.data(), ref.data(), ep);
  for (size_t i = 0; i < ref.size(); ++i) ref[i] = bn_ref(ref[i], bn, static_cast<int64_t>(i % cout), 1e-3f);
  EXPECT_LE(max_abs_diff(y.f32, ref), 2e-6f);
}

TEST(Converter, FoldsBatchNormIntoConvAndDense) {
  std::mt19937 rng(2);
  {  // Conv (no bias) + BN + LeakyRelu
    const int cin = 3, cout = 4;
    const auto w = random_floats(rng, cout * cin * 9);
    const BnParams bn = random_bn(rng, cout);
    OnnxBuilder b;
    b.input("x", {-1, cin, 6, 5}).output("y").floats("W", {cout, cin, 3, 3}, w);
    OnnxBuilder::attr(b.node("Conv", "conv", {"x", "W"}, {"c"}), "pads", std::vector<int64_t>{1, 0, 1, 2});
    add_bn(b, "c", "n", bn, 1e-5f);
    OnnxBuilder::attr(b.node("LeakyRelu", "act", {"n"}, {"y"}), "alpha", 0.2f);
    const auto model = Model::from_bytes(convert_onnx(b.bytes(), "c.onnx").egan);
    ASSERT_EQ(model->ops().size(), 1u);
    Session s(model, {.batch = 1});
    const auto x = random_floats(rng, 6 * 5 * cin);
    const auto y = s.run({Tensor{"x", DType::kFloat32, Layout::kNHWC, {1, 6, 5, cin}, x, {}}})[0];
    cpu::ConvShape shape{1, cin, cout, {6, 3, 1, 1, 1, 1, 6}, {5, 3, 1, 1, 0, 2, 5}};
    std::vector<float> ref(y.f32.size());
    cpu::conv2d_reference(shape, x.data(), w.data(), ref.data(), {});
    for (size_t i = 0; i < ref.size(); ++i) {
      const float v = bn_ref(ref[i], bn, static_cast<int64_t>(i % cout), 1e-5f);
      ref[i] = v > 0 ? v : 0.2f * v;
    }
    EXPECT_LE(max_abs_diff(y.f32, ref), 2e-6f);
  }
  {  // Gemm (transB) + BatchNorm1d
    const int in = 7, out = 5;
    const auto w = random_floats(rng, out * in), c = random_floats(rng, out);
    const BnParams bn = random_bn(rng, out);
    OnnxBuilder b;
    b.input("x", {-1, in}).output("y").floats("W", {out, in}, w).floats("C", {out}, c);
    auto& g = b.node("Gemm", "fc", {"x", "W", "C"}, {"f"});
    OnnxBuilder::attr(g, "transB", int64_t{1});
    OnnxBuilder::attr(g, "alpha", 0.5f);
    add_bn(b, "f", "y", bn, 1e-5f);
    const auto model = Model::from_bytes(convert_onnx(b.bytes(), "g.onnx").egan);
    Session s(model, {.batch = 3});
    const auto x = random_floats(rng, 3 * in);
    const auto y = s.run({Tensor{"x", DType::kFloat32, Layout::kRowMajor, {3, in}, x, {}}})[0];
    std::vector<float> ref;
    for (int r = 0; r < 3; ++r)
      for (int o = 0; o < out; ++o) {
        double acc = c[o];
        for (int i = 0; i < in; ++i) acc += 0.5 * x[r * in + i] * w[o * in + i];
        ref.push_back(bn_ref(static_cast<float>(acc), bn, o, 1e-5f));
      }
    EXPECT_LE(max_abs_diff(y.f32, ref), 2e-6f);
  }
}

// Grouped (group 3) and depthwise (group = Cin, multiplier 2) Conv, each followed by a
// BatchNorm the converter folds per output channel of the grouped weights [Cout][Cin/group][kh][kw].
TEST(Converter, FoldsBatchNormIntoGroupedAndDepthwiseConv) {
  std::mt19937 rng(4);
  for (const auto& [cin, cout, group] : {std::tuple{6, 9, 3}, std::tuple{5, 10, 5}}) {
    SCOPED_TRACE("group " + std::to_string(group));
    const auto w = random_floats(rng, static_cast<size_t>(cout * (cin / group) * 9)), bias = random_floats(rng, static_cast<size_t>(cout));
    const BnParams bn = random_bn(rng, cout);
    OnnxBuilder b;
    b.input("x", {-1, cin, 6, 5}).output("y").floats("W", {cout, cin / group, 3, 3}, w).floats("B", {cout}, bias);
    auto& conv = b.node("Conv", "conv", {"x", "W", "B"}, {"c"});
    OnnxBuilder::attr(conv, "pads", std::vector<int64_t>{1, 0, 1, 2});
    OnnxBuilder::attr(conv, "group", int64_t{group});
    add_bn(b, "c", "y", bn, 1e-5f);
    const auto result = convert_onnx(b.bytes(), "g.onnx");
    EXPECT_NE(result.summary.find("1 BatchNorm folded"), std::string::npos) << result.summary;
    const auto model = Model::from_bytes(result.egan);
    ASSERT_EQ(model->ops().size(), 1u);
    EXPECT_NE(model->ops()[0].attributes.find("groups " + std::to_string(group)), std::string::npos) << model->ops()[0].attributes;
    Session s(model, {.batch = 2});
    const auto x = random_floats(rng, static_cast<size_t>(2 * 6 * 5 * cin));
    const auto y = s.run({Tensor{"x", DType::kFloat32, Layout::kNHWC, {2, 6, 5, cin}, x, {}}})[0];
    cpu::ConvShape shape{2, cin, cout, {6, 3, 1, 1, 1, 1, 6}, {5, 3, 1, 1, 0, 2, 5}};
    std::vector<float> ref(y.f32.size());
    cpu::conv2d_grouped_reference(shape, group, x.data(), w.data(), ref.data(), {bias.data(), cpu::Activation::kNone, 0});
    for (size_t i = 0; i < ref.size(); ++i) ref[i] = bn_ref(ref[i], bn, static_cast<int64_t>(i % static_cast<size_t>(cout)), 1e-5f);
    EXPECT_LE(max_abs_diff(y.f32, ref), 5e-6f);
  }
}

// Grouped ConvTranspose (group 2, k4 s2 p1) + BatchNorm, folded per output channel of
// the grouped weights [Cin][Cout/group][kh][kw]; every algorithm the session offers runs it.
TEST(Converter, FoldsBatchNormIntoGroupedConvTranspose) {
  std::mt19937 rng(5);
  const int cin = 6, cout = 10, group = 2, k = 4;
  const auto w = random_floats(rng, static_cast<size_t>(cin * (cout / group) * k * k)), bias = random_floats(rng, cout);
  const BnParams bn = random_bn(rng, cout);
  OnnxBuilder b;
  b.input("x", {-1, cin, 3, 4}).output("y").floats("W", {cin, cout / group, k, k}, w).floats("B", {cout}, bias);
  auto& ct = b.node("ConvTranspose", "deconv", {"x", "W", "B"}, {"t"});
  OnnxBuilder::attr(ct, "strides", std::vector<int64_t>{2, 2});
  OnnxBuilder::attr(ct, "pads", std::vector<int64_t>{1, 1, 1, 1});
  OnnxBuilder::attr(ct, "group", int64_t{group});
  add_bn(b, "t", "y", bn, 1e-3f);
  const auto result = convert_onnx(b.bytes(), "bn.onnx");
  EXPECT_NE(result.summary.find("1 BatchNorm folded"), std::string::npos) << result.summary;
  const auto model = Model::from_bytes(result.egan);
  ASSERT_EQ(model->ops().size(), 1u);
  const auto x = random_floats(rng, 2 * 3 * 4 * cin);  // NHWC
  cpu::ConvShape shape{2, cin, cout, {3, k, 2, 1, 1, 1, 6}, {4, k, 2, 1, 1, 1, 8}};
  std::vector<float> ref(static_cast<size_t>(2 * 6 * 8 * cout));
  cpu::conv_transpose2d_grouped_reference(shape, group, x.data(), w.data(), ref.data(), {bias.data(), cpu::Activation::kNone, 0});
  for (size_t i = 0; i < ref.size(); ++i) ref[i] = bn_ref(ref[i], bn, static_cast<int64_t>(i % cout), 1e-3f);
  for (ConvTranspose2DAlgo algo : {ConvTranspose2DAlgo::kSplit, ConvTranspose2DAlgo::kZeroInsert, ConvTranspose2DAlgo::kCol2im}) {
    Session s(model, {.batch = 2, .conv_transpose2d_algo = algo});
    const auto y = s.run({Tensor{"x", DType::kFloat32, Layout::kNHWC, {2, 3, 4, cin}, x, {}}})[0];
    EXPECT_LE(max_abs_diff(y.f32, ref), 5e-6f) << to_string(algo);
  }
}

TEST(Converter, OutputPaddingMayReachTheDilation) {
  // PyTorch allows output_padding < max(stride, dilation); converter and loader must agree.
  std::mt19937 rng(4);
  const auto w = random_floats(rng, 2 * 3 * 3 * 3);
  OnnxBuilder b;
  b.input("x", {-1, 2, 4, 4}).output("y").floats("W", {2, 3, 3, 3}, w);
  auto& n = b.node("ConvTranspose", "dilated", {"x", "W"}, {"y"});
  OnnxBuilder::attr(n, "dilations", std::vector<int64_t>{3, 3});
  OnnxBuilder::attr(n, "output_padding", std::vector<int64_t>{2, 1});
  const auto model = Model::from_bytes(convert_onnx(b.bytes(), "d.onnx").egan);
  EXPECT_EQ(model->outputs()[0].dims, (std::vector<int64_t>{-1, 12, 11, 3}));
  Session s(model, {.batch = 1});
  const auto x = random_floats(rng, 4 * 4 * 2);
  const auto y = s.run({Tensor{"x", DType::kFloat32, Layout::kNHWC, {1, 4, 4, 2}, x, {}}})[0];
  cpu::ConvShape shape{1, 2, 3, {4, 3, 1, 3, 0, 0, 12}, {4, 3, 1, 3, 0, 0, 11}};
  std::vector<float> ref(y.f32.size());
  cpu::conv_transpose2d_reference(shape, x.data(), w.data(), ref.data(), {});
  EXPECT_LE(max_abs_diff(y.f32, ref), 1e-5f);
}

TEST(Converter, KeepsBatchNormStandaloneWhenItCannotFold) {
  // The conv output feeds two consumers (BN and the graph output): BN cannot fold.
  std::mt19937 rng(3);
  OnnxBuilder b;
  b.input("x", {-1, 2, 4, 4}).output("c").output("y").floats("W", {3, 2, 1, 1}, random_floats(rng, 6));
  b.node("Conv", "conv", {"x", "W"}, {"c"});
  add_bn(b, "c", "y", random_bn(rng, 3), 1e-5f);
  const auto model = Model::from_bytes(convert_onnx(b.bytes(), "t.onnx").egan);
  ASSERT_EQ(model->ops().size(), 2u);
  EXPECT_EQ(model->ops()[1].kind, "ChannelAffine");
}

// A constant scalar Mul folds into a conv without an activation (its weights and bias);
// after a conv with a fused ReLU it becomes a ChannelAffine; c / x is a Binary with a
// constant operand; two run-time tensors a Binary.
TEST(Converter, RoutesAddSubMulDiv) {
  auto kinds = [](const std::string& bytes) {
    std::vector<std::string> k;
    for (const auto& op : Model::from_bytes(convert_onnx(bytes, "t.onnx").egan)->ops()) k.push_back(op.kind);
    return k;
  };
  std::mt19937 rng(5);
  {
    OnnxBuilder b;
    b.input("x", {-1, 2, 4, 4}).output("y").floats("W", {3, 2, 1, 1}, random_floats(rng, 6)).floats("s", {}, {0.2f});
    b.node("Conv", "conv", {"x", "W"}, {"c"});
    b.node("Mul", "scale", {"c", "s"}, {"y"});
    EXPECT_EQ(kinds(b.bytes()), std::vector<std::string>{"Conv2D"});
  }
  {
    OnnxBuilder b;
    b.input("x", {-1, 2, 4, 4}).output("y").floats("W", {3, 2, 1, 1}, random_floats(rng, 6)).floats("s", {3, 1, 1}, {0.2f, 0.3f, 0.4f});
    b.node("Conv", "conv", {"x", "W"}, {"c"});
    b.node("Relu", "relu", {"c"}, {"r"});
    b.node("Sub", "flip", {"s", "r"}, {"y"});
    EXPECT_EQ(kinds(b.bytes()), (std::vector<std::string>{"Conv2D", "ChannelAffine"}));
  }
  {
    OnnxBuilder b;
    b.input("x", {-1, 2, 4, 4}).output("y").floats("s", {}, {2.f});
    b.node("Div", "inv", {"s", "x"}, {"y"});
    EXPECT_EQ(kinds(b.bytes()), std::vector<std::string>{"Binary"});
  }
  {
    OnnxBuilder b;
    b.input("x", {-1, 2, 4, 4}).input("z", {-1, 2, 1, 1}).output("y");
    b.node("Mul", "mod", {"x", "z"}, {"y"});
    EXPECT_EQ(kinds(b.bytes()), std::vector<std::string>{"Binary"});
  }
}

// Invertible activations fuse into the conv; HardSwish never does; torch's Mish
// (x * tanh(softplus(x))) is one Elementwise op.
TEST(Converter, FusesInvertibleActivationsAndRecognisesMish) {
  auto kinds = [](const std::string& bytes) {
    std::vector<std::string> k;
    for (const auto& op : Model::from_bytes(convert_onnx(bytes, "t.onnx").egan)->ops()) k.push_back(op.kind + " " + op.attributes);
    return k;
  };
  std::mt19937 rng(6);
  for (const char* act : {"Elu", "Selu", "HardSigmoid", "Softplus", "HardSwish"}) {
    SCOPED_TRACE(act);
    OnnxBuilder b;
    b.input("x", {-1, 2, 4, 4}).output("y").floats("W", {3, 2, 1, 1}, random_floats(rng, 6));
    b.node("Conv", "conv", {"x", "W"}, {"c"});
    b.node(act, "act", {"c"}, {"y"});
    EXPECT_EQ(kinds(b.bytes()).size(), std::string(act) == "HardSwish" ? 2u : 1u);
  }
  OnnxBuilder b;
  b.input("x", {-1, 2, 4, 4}).output("y").floats("W", {3, 2, 1, 1}, random_floats(rng, 6));
  b.node("Conv", "conv", {"x", "W"}, {"c"});
  b.node("Softplus", "sp", {"c"}, {"s"});
  b.node("Tanh", "th", {"s"}, {"t"});
  b.node("Mul", "mul", {"c", "t"}, {"y"});
  const auto k = kinds(b.bytes());
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[1], "Elementwise mish");
}

struct ErrorCase {
  const char* name;
  std::function<void(OnnxBuilder&)> build;
  std::vector<std::string> expected;  // every string must appear in the message
};

void conv_transpose_model(OnnxBuilder& b, const std::function<void(onnx::NodeProto&)>& attrs) {
  b.input("x", {-1, 2, 3, 3}).output("y").floats("W", {2, 2, 3, 3}, std::vector<float>(36, 0.1f));
  auto& n = b.node("ConvTranspose", "up1", {"x", "W"}, {"y"});
  OnnxBuilder::attr(n, "strides", std::vector<int64_t>{2, 2});
  attrs(n);
}

TEST(Converter, UnsupportedOpsAndAttributesAreNamedErrors) {
  const std::vector<ErrorCase> cases = {
      {"unsupported op", [](OnnxBuilder& b) {
         b.input("x", {-1, 4}).output("y");
         b.node("LpNormalization", "lp", {"x"}, {"y"});
       }, {"lp", "LpNormalization", "not supported"}},
      {"ConvTranspose group not dividing the channels", [](OnnxBuilder& b) {
         conv_transpose_model(b, [](onnx::NodeProto& n) { OnnxBuilder::attr(n, "group", int64_t{3}); });
       }, {"up1", "ConvTranspose", "'group' = 3", "divide"}},
      {"ConvTranspose group 0", [](OnnxBuilder& b) { conv_transpose_model(b, [](onnx::NodeProto& n) { OnnxBuilder::attr(n, "group", int64_t{0}); }); },
       {"up1", "ConvTranspose", "'group' = 0"}},
      {"unknown attribute", [](OnnxBuilder& b) { conv_transpose_model(b, [](onnx::NodeProto& n) { OnnxBuilder::attr(n, "fancy", int64_t{1}); }); },
       {"up1", "ConvTranspose", "'fancy'"}},
      {"bad auto_pad", [](OnnxBuilder& b) { conv_transpose_model(b, [](onnx::NodeProto& n) { OnnxBuilder::attr(n, "auto_pad", std::string("SAME_MIDDLE")); }); },
       {"up1", "'auto_pad'", "SAME_MIDDLE"}},
      {"output_padding too large", [](OnnxBuilder& b) {
         conv_transpose_model(b, [](onnx::NodeProto& n) { OnnxBuilder::attr(n, "output_padding", std::vector<int64_t>{2, 0}); });
       }, {"up1", "'output_padding'"}},
      {"3-D ConvTranspose", [](OnnxBuilder& b) {
         conv_transpose_model(b, [](onnx::NodeProto& n) { OnnxBuilder::attr(n, "dilations", std::vector<int64_t>{1, 1, 1}); });
       }, {"up1", "'dilations'", "2 values"}},
      {"integer weights", [](OnnxBuilder& b) {  // found by onnx_converter_fuzzer: once a read through a null pointer
         b.input("x", {-1, 2, 3, 3}).output("y").ints("W", {2, 2, 3, 3}, std::vector<int64_t>(36, 1));
         b.node("ConvTranspose", "up1", {"x", "W"}, {"y"});
       }, {"up1", "weights must be floating point", "'W' holds integers"}},
      {"integer bias", [](OnnxBuilder& b) {
         b.input("x", {-1, 2, 3, 3}).output("y").floats("W", {2, 2, 3, 3}, std::vector<float>(36, 0.1f)).ints("B", {2}, {1, 2});
         b.node("Conv", "c1", {"x", "W", "B"}, {"y"});
       }, {"c1", "bias must be floating point"}},
      {"ConstantOfShape with an empty value", [](OnnxBuilder& b) {  // found by onnx_converter_fuzzer: once an uncaught out_of_range
         b.input("x", {-1, 2}).output("y").ints("shape", {2}, {1, 2});
         auto& n = b.node("ConstantOfShape", "fill", {"shape"}, {"c"});
         auto* a = n.add_attribute();
         a->set_name("value");
         a->set_type(onnx::AttributeProto::TENSOR);
         a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
         a->mutable_t()->add_dims(0);
         b.node("Add", "add", {"x", "c"}, {"y"});
       }, {"fill", "'value' must hold one element, not 0"}},
      {"shape arithmetic that overflows", [](OnnxBuilder& b) {  // found by onnx_converter_fuzzer: once a signed overflow
         b.input("x", {-1, 2}).output("y").ints("big", {1}, {int64_t{1} << 62}).ints("four", {1}, {4});
         b.node("Mul", "times_four", {"big", "four"}, {"shape"});
         b.node("Reshape", "reshape", {"x", "shape"}, {"y"});
       }, {"times_four", "Mul of 4611686018427387904 and 4 overflows int64"}},
      {"run-time weights", [](OnnxBuilder& b) {
         b.input("x", {-1, 2, 3, 3}).input("w", {-1, 2, 3, 3}).output("y");
         b.node("ConvTranspose", "up1", {"x", "w"}, {"y"});
       }, {"up1", "weights must be a constant"}},
      {"training-mode BN", [](OnnxBuilder& b) {
         b.input("x", {-1, 2, 3, 3}).output("y");
         b.floats("g", {2}, {1, 1}).floats("b", {2}, {0, 0}).floats("m", {2}, {0, 0}).floats("v", {2}, {1, 1});
         OnnxBuilder::attr(b.node("BatchNormalization", "bn7", {"x", "g", "b", "m", "v"}, {"y"}), "training_mode", int64_t{1});
       }, {"bn7", "'training_mode'"}},
      {"group not dividing the channels", [](OnnxBuilder& b) {
         b.input("x", {-1, 4, 5, 5}).output("y").floats("W", {3, 1, 3, 3}, std::vector<float>(27, 0.f));
         OnnxBuilder::attr(b.node("Conv", "dw", {"x", "W"}, {"y"}), "group", int64_t{4});
       }, {"dw", "Conv", "'group' = 4", "divide"}},
      {"zero group", [](OnnxBuilder& b) {
         b.input("x", {-1, 2, 5, 5}).output("y").floats("W", {2, 1, 3, 3}, std::vector<float>(18, 0.f));
         OnnxBuilder::attr(b.node("Conv", "dw", {"x", "W"}, {"y"}), "group", int64_t{0});
       }, {"dw", "Conv", "'group' = 0"}},
      {"grouped weights of the wrong depth", [](OnnxBuilder& b) {
         b.input("x", {-1, 4, 5, 5}).output("y").floats("W", {4, 4, 3, 3}, std::vector<float>(144, 0.f));
         OnnxBuilder::attr(b.node("Conv", "g", {"x", "W"}, {"y"}), "group", int64_t{2});
       }, {"g", "Conv", "weights expect 8", "2 groups"}},
      {"add with opset-6 broadcast attribute", [](OnnxBuilder& b) {
         b.input("x", {-1, 4}).input("z", {-1, 4}).output("y");
         OnnxBuilder::attr(b.node("Add", "sum", {"x", "z"}, {"y"}), "broadcast", int64_t{1});
       }, {"sum", "Add", "'broadcast'"}},
      {"add of shapes that do not broadcast", [](OnnxBuilder& b) {
         b.input("x", {-1, 4}).input("z", {-1, 3}).output("y");
         b.node("Add", "sum", {"x", "z"}, {"y"});
       }, {"sum", "Add", "do not broadcast"}},
      {"mul of run-time tensors of different ranks", [](OnnxBuilder& b) {
         b.input("x", {-1, 4}).input("z", {-1, 2, 4}).output("y");
         b.node("Mul", "prod", {"x", "z"}, {"y"});
       }, {"prod", "Mul", "different ranks"}},
      {"sub of integer tensors", [](OnnxBuilder& b) {
         b.input("x", {-1, 4}, onnx::TensorProto::INT64).input("z", {-1, 4}).output("y");
         b.node("Sub", "diff", {"z", "x"}, {"y"});
       }, {"diff", "Sub", "integer"}},
      {"div by a constant with a batch dimension", [](OnnxBuilder& b) {
         b.input("x", {-1, 4}).output("y").floats("c", {3, 4}, std::vector<float>(12, 1.f));
         b.node("Div", "quot", {"x", "c"}, {"y"});
       }, {"quot", "Div", "batch dimension"}},
      {"constant of higher rank", [](OnnxBuilder& b) {
         b.input("x", {-1, 4}).output("y").floats("c", {1, 1, 4}, std::vector<float>(4, 1.f));
         b.node("Add", "sum", {"x", "c"}, {"y"});
       }, {"sum", "higher rank"}},
      {"prelu slope along the width", [](OnnxBuilder& b) {
         b.input("x", {-1, 3, 2, 3}).output("y").floats("s", {3}, {0.1f, 0.2f, 0.3f});
         b.node("PRelu", "pr", {"x", "s"}, {"y"});
       }, {"pr", "PRelu", "slope of shape [3]"}},
      {"prelu run-time slope", [](OnnxBuilder& b) {
         b.input("x", {-1, 3}).input("s", {-1, 3}).output("y");
         b.node("PRelu", "pr", {"x", "s"}, {"y"});
       }, {"pr", "slope must be a constant"}},
      {"clip with run-time bounds", [](OnnxBuilder& b) {
         b.input("x", {-1, 3}).input("lo", {-1, 1}).output("y");
         b.node("Clip", "clamp", {"x", "lo"}, {"y"});
       }, {"clamp", "Clip", "min", "constant"}},
      {"clip with opset-6 attributes", [](OnnxBuilder& b) {
         b.input("x", {-1, 3}).output("y");
         OnnxBuilder::attr(b.node("Clip", "clamp", {"x"}, {"y"}), "min", 0.f);
       }, {"clamp", "Clip", "'min'"}},
      {"selu with negative gamma", [](OnnxBuilder& b) {
         b.input("x", {-1, 3}).output("y");
         OnnxBuilder::attr(b.node("Selu", "s", {"x"}, {"y"}), "gamma", -1.f);
       }, {"s", "Selu", "'gamma'"}},
      {"elu with zero alpha", [](OnnxBuilder& b) {
         b.input("x", {-1, 3}).output("y");
         OnnxBuilder::attr(b.node("Elu", "e", {"x"}, {"y"}), "alpha", 0.f);
       }, {"e", "Elu", "'alpha'"}},
      {"hard sigmoid unknown attribute", [](OnnxBuilder& b) {
         b.input("x", {-1, 3}).output("y");
         OnnxBuilder::attr(b.node("HardSigmoid", "hs", {"x"}, {"y"}), "gamma", 1.f);
       }, {"hs", "HardSigmoid", "'gamma'"}},
      {"prelu attribute", [](OnnxBuilder& b) {
         b.input("x", {-1, 3}).output("y").floats("s", {1}, {0.1f});
         OnnxBuilder::attr(b.node("PRelu", "pr", {"x", "s"}, {"y"}), "fancy", int64_t{1});
       }, {"pr", "'fancy'"}},
      {"concat on batch", [](OnnxBuilder& b) {
         b.input("x", {-1, 4}).input("z", {-1, 4}).output("y");
         OnnxBuilder::attr(b.node("Concat", "cat", {"x", "z"}, {"y"}), "axis", int64_t{0});
       }, {"cat", "'axis' = 0"}},
      {"batch-dependent reshape", [](OnnxBuilder& b) {
         b.input("x", {-1, 6}).output("y").ints("shape", {2}, {2, -1});
         b.node("Reshape", "r", {"x", "shape"}, {"y"});
       }, {"batch"}},
      {"not topologically sorted", [](OnnxBuilder& b) {
         b.input("x", {-1, 4}).output("y");
         b.node("Relu", "second", {"t"}, {"y"});
         b.node("Relu", "first", {"x"}, {"t"});
       }, {"second", "'t'", "topologically"}},
      {"old opset", [](OnnxBuilder& b) {
         b.proto().mutable_opset_import(0)->set_version(9);
         b.input("x", {-1, 4}).output("y");
         b.node("Relu", "r", {"x"}, {"y"});
       }, {"opset 9"}},
      {"future opset", [](OnnxBuilder& b) {
         b.proto().mutable_opset_import(0)->set_version(29);
         b.input("x", {-1, 4}).output("y");
         b.node("Relu", "r", {"x"}, {"y"});
       }, {"opset 29", "11-28"}},
      {"fixed-size input needed", [](OnnxBuilder& b) {
         b.input("x", {-1, 4}).output("y");
         b.proto().mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_param("F");
         b.node("Relu", "r", {"x"}, {"y"});
       }, {"'x'", "fixed positive"}},
 {"run-time If", [](OnnxBuilder& b) {
         b.input("c", {-1}, onnx::TensorProto::INT64).input("x", {-1, 4}).output("y");
         b.node("If", "branchy", {"c"}, {"y"});
       }, {"branchy", "If", "known at conversion time"}},
{"transpose perm not a permutation", [](OnnxBuilder& b) {
         b.input("x", {-1, 4}).output("y").floats("c", {2, 3}, std::vector<float>(6, 1.f));
         OnnxBuilder::attr(b.node("Transpose", "tp", {"c"}, {"ct"}), "perm", std::vector<int64_t>{0, 0});
         b.node("Relu", "r", {"x"}, {"y"});
       }, {"tp", "not a permutation"}},
      {"huge constant broadcast", [](OnnxBuilder& b) {
         b.input("x", {-1, 4}).output("y");
         b.floats("a", {16384, 1}, std::vector<float>(16384, 1.f)).floats("c", {1, 16384}, std::vector<float>(16384, 1.f));
         b.node("Mul", "outer", {"a", "c"}, {"ac"});
         b.node("Relu", "r", {"x"}, {"y"});
       }, {"outer", "too large"}},
      {"huge input", [](OnnxBuilder& b) {
         b.input("x", {-1, 1 << 20, 1 << 20}).output("y");
         b.node("Relu", "r", {"x"}, {"y"});
       }, {"'x'", "too large"}},
      {"huge reshape", [](OnnxBuilder& b) {
         b.input("x", {-1, 4}).output("y").ints("shape", {3}, {-1, int64_t{1} << 30, int64_t{1} << 30});
         b.node("Reshape", "rs", {"x", "shape"}, {"y"});
       }, {"rs", "too large"}},
      {"output is an input", [](OnnxBuilder& b) { b.input("x", {-1, 4}).output("x"); }, {"'x'", "graph input"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    OnnxBuilder b;
    c.build(b);
    const std::string error = convert_error(b.bytes());
    ASSERT_FALSE(error.empty()) << "converted without an error";
    for (const auto& needle : c.expected) EXPECT_NE(error.find(needle), std::string::npos) << "message: " << error;
  }
  EXPECT_NE(convert_error("this is not protobuf").find("not a valid ONNX model"), std::string::npos);
  EXPECT_NE(convert_error("").find("not a valid ONNX model"), std::string::npos);
}

// 1-D maps: a rank-3 graph input stays [N, C, L] row-major; convolutions and pools see
// it NHWC [N, 1, L, C] (a relayout Reshape in front); Concat axes, Flatten and the
// rank-3 output keep ONNX's element order.
TEST(Converter, RankThreeMapsKeepOnnxOrderAtTheEdgesAndNhwcInside) {
  std::mt19937 rng(25);
  const std::vector<float> identity = {1, 0, 0, 1};  // Conv1d(2, 2, k1): y = x
  for (int64_t axis : {1, 2, -1}) {
    SCOPED_TRACE(axis);
    OnnxBuilder b;
    b.input("x", {-1, 2, 5}).output("cat").output("flat").floats("W", {2, 2, 1}, identity);
    b.node("Conv", "c1", {"x", "W"}, {"c"});
    b.node("Relu", "r", {"x"}, {"rx"});  // keeps the input's (row-major) layout: Concat makes it NHWC
    OnnxBuilder::attr(b.node("Concat", "cat", {"c", "rx"}, {"cat"}), "axis", axis);
    b.node("Flatten", "fl", {"c"}, {"flat"});
    const auto model = Model::from_bytes(convert_onnx(b.bytes(), "t.onnx").egan);
    ASSERT_EQ(model->inputs()[0].dims, (std::vector<int64_t>{-1, 2, 5}));
    EXPECT_EQ(model->inputs()[0].layout, Layout::kRowMajor);
    const int64_t a = axis < 0 ? axis + 3 : axis;
    EXPECT_EQ(model->outputs()[0].dims, (std::vector<int64_t>{-1, a == 1 ? 4 : 2, a == 1 ? 5 : 10}));
    EXPECT_EQ(model->outputs()[0].layout, Layout::kRowMajor);
    Session session(model, {.batch = 2});
    const std::vector<float> x = random_floats(rng, 20);
    const auto out = session.run({{"x", DType::kFloat32, Layout::kRowMajor, {2, 2, 5}, x, {}}});
    std::vector<float> want;
    for (int64_t n = 0; n < 2; ++n) {
      const auto sample = std::vector<float>(x.begin() + n * 10, x.begin() + n * 10 + 10);
      std::vector<float> relu = sample;
      for (float& v : relu) v = std::max(v, 0.f);
      if (a == 1) {
        want.insert(want.end(), sample.begin(), sample.end());
        want.insert(want.end(), relu.begin(), relu.end());
      } else {
        for (int64_t c = 0; c < 2; ++c) {
          want.insert(want.end(), sample.begin() + c * 5, sample.begin() + c * 5 + 5);
          want.insert(want.end(), relu.begin() + c * 5, relu.begin() + c * 5 + 5);
        }
      }
    }
    EXPECT_LE(max_abs_diff(out[0].f32, want), 1e-6f);
    EXPECT_LE(max_abs_diff(out[1].f32, x), 1e-6f);  // Flatten of y = x: ONNX order
  }
}

// Global pools of a rank-3 graph input (relayouted into a map) and of a rank-4 one.
TEST(Converter, GlobalPoolsReduceTheWholeMap) {
  std::mt19937 rng(26);
  for (int rank : {3, 4}) {
    SCOPED_TRACE(rank);
    const std::vector<int64_t> dims = rank == 3 ? std::vector<int64_t>{-1, 3, 7} : std::vector<int64_t>{-1, 3, 2, 5};
    const int64_t pixels = rank == 3 ? 7 : 10;
    OnnxBuilder b;
    b.input("x", dims).output("mx").output("avg");
    b.node("GlobalMaxPool", "gmp", {"x"}, {"mx"});
    b.node("GlobalAveragePool", "gap", {"x"}, {"avg"});
    const auto model = Model::from_bytes(convert_onnx(b.bytes(), "t.onnx").egan);
    for (const OutputInfo& o : model->outputs())  // [N, 3, 1] row-major; [N, 1, 1, 3] NHWC
      EXPECT_EQ(o.dims, rank == 3 ? std::vector<int64_t>({-1, 3, 1}) : std::vector<int64_t>({-1, 1, 1, 3}));
    Session session(model, {.batch = 2});
    Tensor x{"x", DType::kFloat32, Layout::kRowMajor, dims, random_floats(rng, static_cast<size_t>(2 * 3 * pixels)), {}};
    x.shape[0] = 2;
    const std::vector<Tensor> out = session.run({model->inputs()[0].layout == Layout::kNHWC ? to_nhwc(x) : x});
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t c = 0; c < 3; ++c) {
        const auto first = x.f32.begin() + (n * 3 + c) * pixels;
        const float mx = *std::max_element(first, first + pixels);
        double sum = 0;
        for (int64_t p = 0; p < pixels; ++p) sum += first[p];
        EXPECT_EQ(out[0].f32[static_cast<size_t>(n * 3 + c)], mx);
        EXPECT_NEAR(out[1].f32[static_cast<size_t>(n * 3 + c)], sum / static_cast<double>(pixels), 1e-6);
      }
  }
}

TEST(Converter, PoolsAndOneDimensionalConvolutionsRefuseWhatTheyDoNotImplement) {
  auto pool = [](const char* op, const std::function<void(onnx::NodeProto&)>& attrs, bool indices = false) {
    return [=](OnnxBuilder& b) {
      b.input("x", {-1, 2, 6, 6}).output("y");
      std::vector<std::string> outs = {"y"};
      if (indices) outs.push_back("idx");
      auto& n = b.node(op, "p1", {"x"}, outs);
      if (std::string(op) != "GlobalAveragePool") OnnxBuilder::attr(n, "kernel_shape", std::vector<int64_t>{2, 2});
      attrs(n);
    };
  };
  auto conv1d = [](const std::function<void(onnx::NodeProto&)>& attrs, std::vector<int64_t> wdims = {3, 2, 3}) {
    return [=](OnnxBuilder& b) {
      int64_t count = 1;
      for (int64_t d : wdims) count *= d;
      b.input("x", {-1, 2, 8}).output("y").floats("W", wdims, std::vector<float>(static_cast<size_t>(count), 0.1f));
      attrs(b.node("Conv", "c1", {"x", "W"}, {"y"}));
    };
  };
  using N = onnx::NodeProto;
  const std::vector<ErrorCase> cases = {
      {"storage_order", pool("MaxPool", [](N& n) { OnnxBuilder::attr(n, "storage_order", int64_t{1}); }), {"p1", "MaxPool", "'storage_order'"}},
      {"indices", pool("MaxPool", [](N&) {}, true), {"p1", "'Indices'"}},
      {"average dilations", pool("AveragePool", [](N& n) { OnnxBuilder::attr(n, "dilations", std::vector<int64_t>{2, 2}); }),
       {"p1", "AveragePool", "'dilations'"}},
      {"unknown auto_pad", pool("AveragePool", [](N& n) { OnnxBuilder::attr(n, "auto_pad", std::string("SAME_MIDDLE")); }), {"p1", "'auto_pad'", "SAME_MIDDLE"}},
      {"auto_pad and pads", pool("MaxPool", [](N& n) {
         OnnxBuilder::attr(n, "auto_pad", std::string("SAME_UPPER"));
         OnnxBuilder::attr(n, "pads", std::vector<int64_t>{1, 1, 0, 0});
       }), {"p1", "'pads'", "mutually exclusive"}},
      {"pads as large as the window", pool("MaxPool", [](N& n) { OnnxBuilder::attr(n, "pads", std::vector<int64_t>{2, 0, 0, 0}); }), {"p1", "'pads'"}},
      {"pads count", pool("MaxPool", [](N& n) { OnnxBuilder::attr(n, "pads", std::vector<int64_t>{1, 1}); }), {"p1", "'pads'", "4 values"}},
      {"ceil_mode 2", pool("AveragePool", [](N& n) { OnnxBuilder::attr(n, "ceil_mode", int64_t{2}); }), {"p1", "'ceil_mode'"}},
      {"count_include_pad 3", pool("AveragePool", [](N& n) { OnnxBuilder::attr(n, "count_include_pad", int64_t{3}); }), {"p1", "'count_include_pad'"}},
      {"unknown pool attribute", pool("AveragePool", [](N& n) { OnnxBuilder::attr(n, "fancy", int64_t{1}); }), {"p1", "'fancy'"}},
      {"global pool attribute", pool("GlobalAveragePool", [](N& n) { OnnxBuilder::attr(n, "kernel_shape", std::vector<int64_t>{2, 2}); }),
       {"p1", "GlobalAveragePool", "'kernel_shape'"}},
      {"missing kernel_shape", [](OnnxBuilder& b) {
         b.input("x", {-1, 2, 6, 6}).output("y");
         b.node("MaxPool", "p1", {"x"}, {"y"});
       }, {"p1", "'kernel_shape'", "required"}},
      {"pool of a vector", [](OnnxBuilder& b) {
         b.input("x", {-1, 6}).output("y");
         OnnxBuilder::attr(b.node("MaxPool", "p1", {"x"}, {"y"}), "kernel_shape", std::vector<int64_t>{2});
       }, {"p1", "rank 2"}},
      {"1-D strides of 2-D", conv1d([](N& n) { OnnxBuilder::attr(n, "strides", std::vector<int64_t>{1, 2}); }), {"c1", "'strides'", "1 value"}},
      {"1-D pads of 2-D", conv1d([](N& n) { OnnxBuilder::attr(n, "pads", std::vector<int64_t>{1, 1, 1, 1}); }), {"c1", "'pads'", "2 values"}},
      {"1-D grouped", conv1d([](N& n) { OnnxBuilder::attr(n, "group", int64_t{2}); }, {3, 1, 3}), {"c1", "'group' = 2"}},
      {"1-D input, 2-D weights", conv1d([](N&) {}, {3, 2, 1, 3}), {"c1", "weights must have the input's rank"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    OnnxBuilder b;
    c.build(b);
    const std::string error = convert_error(b.bytes());
    ASSERT_FALSE(error.empty()) << "converted without an error";
    for (const auto& needle : c.expected) EXPECT_NE(error.find(needle), std::string::npos) << "message: " << error;
  }
}

TEST(Converter, MetadataRoundTrips) {
  OnnxBuilder b;
  b.input("z", {-1, 3}).input("label", {-1}, onnx::TensorProto::INT64).output("img");
  b.floats("table", {4, 2}, std::vector<float>(8, 0.25f)).floats("W", {5, 2, 3, 3}, std::vector<float>(90, 0.01f));
  b.ints("shape", {4}, {-1, 5, 1, 1});
  b.node("Gather", "embed", {"table", "label"}, {"e"});
  OnnxBuilder::attr(b.node("Concat", "cat", {"z", "e"}, {"ze"}), "axis", int64_t{1});
  b.node("Reshape", "to_map", {"ze", "shape"}, {"m"});
  OnnxBuilder::attr(b.node("ConvTranspose", "up", {"m", "W"}, {"u"}), "strides", std::vector<int64_t>{2, 2});
  b.node("Tanh", "out", {"u"}, {"img"});
  const std::string bytes = b.bytes();
  const auto result = convert_onnx(bytes, "cgan_tiny.onnx");
  const auto model = Model::from_bytes(result.egan);

  unsigned char digest[32];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha256(), nullptr);
  std::string hex;
  for (unsigned int i = 0; i < len; ++i) {
    char h[3];
    std::snprintf(h, sizeof h, "%02x", digest[i]);
    hex += h;
  }
  EXPECT_EQ(model->source_sha256(), hex);
  EXPECT_NE(model->producer().find("edgegan-convert"), std::string::npos);
  EXPECT_EQ(model->schema_version(), 2u);
  EXPECT_EQ(model->integrity(), Integrity::kVerified);
  std::map<std::string, std::string> meta(model->metadata().begin(), model->metadata().end());
  EXPECT_EQ(meta["source_file"], "cgan_tiny.onnx");
  EXPECT_EQ(meta["onnx_opset"], "13");
  EXPECT_EQ(meta["onnx_producer"], "edgegan-tests");
  ASSERT_EQ(model->inputs().size(), 2u);
  EXPECT_EQ(model->inputs()[0].role, InputRole::kNoise);
  EXPECT_EQ(model->inputs()[0].noise_size, 3);
  EXPECT_EQ(model->inputs()[1].role, InputRole::kLabel);
  EXPECT_EQ(model->inputs()[1].label_count, 4);
  ASSERT_EQ(model->outputs().size(), 1u);
  EXPECT_EQ(model->outputs()[0].name, "img");
  EXPECT_EQ(model->outputs()[0].role, OutputRole::kImage);
  EXPECT_EQ(model->outputs()[0].layout, Layout::kNHWC);
  EXPECT_EQ(model->outputs()[0].dims, (std::vector<int64_t>{-1, 3, 3, 2}));
  EXPECT_EQ(model->outputs()[0].value_min, -1.f);
  EXPECT_EQ(model->outputs()[0].value_max, 1.f);
  // The ConvTranspose is stored as its 4 phases: taps 2x2, 2x1, 1x2, 1x1 for k3 s2.
  const auto ops = model->ops();
  const auto deconv = std::find_if(ops.begin(), ops.end(), [](const OpInfo& o) { return o.kind == "ConvTranspose2D"; });
  ASSERT_NE(deconv, ops.end());
  ASSERT_EQ(deconv->phases.size(), 4u);
  EXPECT_EQ(deconv->phases[0].taps_h * deconv->phases[0].taps_w, 4);
  EXPECT_EQ(deconv->phases[3].taps_h * deconv->phases[3].taps_w, 1);
}

}  // namespace
}  // namespace edgegan
