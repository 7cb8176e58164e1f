// Decomposed activations (converter/activation_patterns.cpp): torch's GELU (erf and tanh
// forms, in either association), SiLU and ONNX's Gelu op become one Elementwise op that
// computes the function; near misses (another constant, an intermediate read elsewhere)
// stay as the nodes they are and still compute them.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "converter/converter.h"
#include "edgegan/edgegan.h"
#include "tests/converter/convert_error.h"
#include "tests/converter/converted_model.h"
#include "tests/converter/converter_test_util.h"
#include "tests/converter/onnx_builder.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

using testing::convert_error;
using testing::converted_model;
using testing::nhwc;
using testing::OnnxBuilder;
using testing::random_floats;
using testing::torch_gelu_erf;

constexpr int64_t kN = 2, kC = 3, kH = 4, kW = 5;

double gelu(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }
double gelu_tanh(double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); }
double silu(double x) { return x / (1 + std::exp(-x)); }

std::vector<std::string> kinds(const Model& m) {
  std::vector<std::string> k;
  for (const auto& op : m.ops()) k.push_back(op.kind + (op.attributes.empty() ? "" : " " + op.attributes));
  return k;
}

// y of the graph built by `build` (input "x" [N, 3, 4, 5], output "y") for random x in
// [-6, 6] against f, within 2e-6 (1 + |y|); returns the model's op kinds.
std::vector<std::string> check(const std::function<void(OnnxBuilder&)>& build, double (*f)(double), int opset = 17) {
  OnnxBuilder b(opset);
  b.input("x", {-1, kC, kH, kW}).output("y");
  build(b);
  const auto model = converted_model(b.bytes());
  std::mt19937 rng(31);
  auto x = random_floats(rng, kN * kC * kH * kW, -6.f, 6.f);
  x[0] = 0.f, x[1] = -30.f, x[2] = 30.f;
  Session s(model, {.batch = static_cast<int>(kN)});
  // Element-wise: the NHWC order of x and y does not matter.
  const auto y = s.run({nhwc("x", kN, kH, kW, kC, x)})[0].f32;
  EXPECT_EQ(y.size(), x.size());
  for (size_t i = 0; i < y.size() && i < x.size(); ++i) {
    const double want = f(x[i]);
    EXPECT_NEAR(y[i], want, 2e-6 * (1 + std::abs(want))) << "at x = " << x[i];
  }
  return kinds(*model);
}

TEST(ConverterActivationPatterns, TorchGeluErfFormIsOneGelu) {
  EXPECT_EQ(check([](OnnxBuilder& b) { torch_gelu_erf(b, "x", "y"); }, gelu), std::vector<std::string>{"Elementwise gelu"});
}

// 0.5 * x * (1 + erf(x * (1 / sqrt 2))): the half first, a Mul for the Div, the Add's operands swapped.
TEST(ConverterActivationPatterns, GeluInAnotherAssociationIsOneGelu) {
  const auto k = check(
      [](OnnxBuilder& b) {
        b.floats("rsqrt2", {1}, {0.70710678f}).floats("one", {}, {1.f}).floats("half", {}, {0.5f});
        b.node("Mul", "half_x", {"half", "x"}, {"h"});
        b.node("Mul", "scale", {"x", "rsqrt2"}, {"d"});
        b.node("Erf", "erf", {"d"}, {"e"});
        b.node("Add", "add", {"one", "e"}, {"a"});
        b.node("Mul", "mul", {"h", "a"}, {"y"});
      },
      gelu);
  EXPECT_EQ(k, std::vector<std::string>{"Elementwise gelu"});
}

TEST(ConverterActivationPatterns, TorchGeluTanhFormIsOneGeluTanh) {
  const auto k = check(
      [](OnnxBuilder& b) {
        b.floats("cubic", {}, {0.044715f}).floats("c", {}, {0.7978846f}).floats("one", {}, {1.f}).floats("half", {}, {0.5f});
        b.node("Mul", "x2", {"x", "x"}, {"x2"});
        b.node("Mul", "x3", {"x", "x2"}, {"x3"});
        b.node("Mul", "cx3", {"cubic", "x3"}, {"cx3"});
        b.node("Add", "inner", {"x", "cx3"}, {"u"});
        b.node("Mul", "scaled", {"c", "u"}, {"q"});
        b.node("Tanh", "tanh", {"q"}, {"t"});
        b.node("Add", "add", {"one", "t"}, {"a"});
        b.node("Mul", "mul", {"x", "a"}, {"m"});
        b.node("Mul", "mul_half", {"half", "m"}, {"y"});
      },
      gelu_tanh);
  EXPECT_EQ(k, std::vector<std::string>{"Elementwise gelu_tanh"});
}

TEST(ConverterActivationPatterns, SigmoidTimesItsInputIsOneSilu) {
  const auto k = check(
      [](OnnxBuilder& b) {
        b.node("Sigmoid", "sig", {"x"}, {"s"});
        b.node("Mul", "mul", {"s", "x"}, {"y"});
      },
      silu);
  EXPECT_EQ(k, std::vector<std::string>{"Elementwise silu"});
}

TEST(ConverterActivationPatterns, OnnxGeluOpTakesBothApproximations) {
  EXPECT_EQ(check([](OnnxBuilder& b) { b.node("Gelu", "gelu", {"x"}, {"y"}); }, gelu, 20), std::vector<std::string>{"Elementwise gelu"});
  const auto k = check(
      [](OnnxBuilder& b) { OnnxBuilder::attr(b.node("Gelu", "gelu", {"x"}, {"y"}), "approximate", std::string("tanh")); }, gelu_tanh, 20);
  EXPECT_EQ(k, std::vector<std::string>{"Elementwise gelu_tanh"});
  OnnxBuilder b(20);
  b.input("x", {-1, kC, kH, kW}).output("y");
  OnnxBuilder::attr(b.node("Gelu", "gelu", {"x"}, {"y"}), "approximate", std::string("sigmoid"));
  const std::string error = convert_error(b.bytes());
  EXPECT_NE(error.find("'approximate' = 'sigmoid'"), std::string::npos) << error;
}

// Another constant than 0.5, or the Erf's output read by a second node: not a GELU, so
// the nodes stay what they are (and compute what they say).
TEST(ConverterActivationPatterns, NearMissesStayDecomposed) {
  const auto k = check([](OnnxBuilder& b) { torch_gelu_erf(b, "x", "y", 0.6f); }, [](double x) { return 1.2 * gelu(x); });
  EXPECT_GT(k.size(), 1u);
  for (const auto& kind : k) EXPECT_EQ(kind.find("gelu"), std::string::npos) << kind;
  const auto shared = check(
      [](OnnxBuilder& b) {
        b.floats("sqrt2", {}, {1.4142135f}).floats("one", {}, {1.f}).floats("half", {}, {0.5f});
        b.node("Div", "div", {"x", "sqrt2"}, {"d"});
        b.node("Erf", "erf", {"d"}, {"e"});
        b.node("Add", "add", {"e", "one"}, {"a"});
        b.node("Mul", "mul", {"x", "a"}, {"m"});
        b.node("Mul", "mul_half", {"m", "half"}, {"g"});
        b.node("Add", "plus_erf", {"g", "e"}, {"y"});  // erf(x / sqrt 2) read twice
      },
      [](double x) { return gelu(x) + std::erf(x / std::sqrt(2.0)); });
  for (const auto& kind : shared) EXPECT_EQ(kind.find("gelu"), std::string::npos) << kind;
  const auto other_input = check(
      [](OnnxBuilder& b) {
        b.floats("two", {}, {2.f});
        b.node("Mul", "double", {"x", "two"}, {"x2"});
        b.node("Sigmoid", "sig", {"x2"}, {"s"});
        b.node("Mul", "mul", {"s", "x"}, {"y"});  // x * sigmoid(2x): not SiLU
      },
      [](double x) { return x / (1 + std::exp(-2 * x)); });
  for (const auto& kind : other_input) EXPECT_EQ(kind.find("silu"), std::string::npos) << kind;
}

}  // namespace
}  // namespace edgegan
