// LayerNormalization (opset 17) and torch's decomposed export of it convert to the same
// run-time math and compute what plain loops over the ONNX layout compute, over the last
// axis of a token tensor [N, L, C] and over trailing axes of a map; what it refuses
// names the node. (Its Mean and InvStdDev outputs: ONNX's conformance cases.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
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
using testing::nhwc_from_nchw;
using testing::nhwc_to_nchw;
using testing::op_kinds;
using testing::OnnxBuilder;
using testing::random_floats;

// y over ONNX-layout x of `dims` (dims[0] the batch), normalised over dims[axis..].
std::vector<float> layer_norm_reference(const std::vector<float>& x, const std::vector<int64_t>& dims, size_t axis,
                                        const std::vector<float>& scale, const std::vector<float>& bias, double eps) {
  int64_t inner = 1, outer = 1;
  for (size_t k = 0; k < dims.size(); ++k) (k < axis ? outer : inner) *= dims[k];
  std::vector<float> y(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    const float* v = x.data() + o * inner;
    double mean = 0, var = 0;
    for (int64_t i = 0; i < inner; ++i) mean += v[i];
    mean /= static_cast<double>(inner);
    for (int64_t i = 0; i < inner; ++i) var += (v[i] - mean) * (v[i] - mean);
    var /= static_cast<double>(inner);
    for (int64_t i = 0; i < inner; ++i)
      y[static_cast<size_t>(o * inner + i)] =
          static_cast<float>((v[i] - mean) / std::sqrt(var + eps) * scale[static_cast<size_t>(i)] + (bias.empty() ? 0.0 : bias[static_cast<size_t>(i)]));
  }
  return y;
}

struct Case {
  std::vector<int64_t> dims;  // dims[0]: the batch the test runs
  int64_t axis;               // as written in the node (may be negative)
  bool bias;
};

// The graph: opset 17's LayerNormalization, or (decomposed) torch's nodes before it.
std::string layer_norm_graph(const Case& c, bool decomposed, const std::vector<float>& scale, const std::vector<float>& bias, float eps) {
  OnnxBuilder b(decomposed ? 13 : 17);
  std::vector<int64_t> in = c.dims;
  in[0] = -1;
  const size_t rank = c.dims.size(), axis = static_cast<size_t>(c.axis < 0 ? c.axis + static_cast<int64_t>(rank) : c.axis);
  const std::vector<int64_t> norm_dims(c.dims.begin() + static_cast<std::ptrdiff_t>(axis), c.dims.end());
  b.input("x", in).output("y").floats("scale", norm_dims, scale);
  if (c.bias) b.floats("bias", norm_dims, bias);
  if (!decomposed) {
    std::vector<std::string> inputs{"x", "scale"};
    if (c.bias) inputs.push_back("bias");
    auto& n = b.node("LayerNormalization", "ln", inputs, {"y"});
    OnnxBuilder::attr(n, "axis", c.axis);
    OnnxBuilder::attr(n, "epsilon", eps);
    return b.bytes();
  }
  std::vector<int64_t> axes;
  for (size_t a = axis; a < rank; ++a) axes.push_back(static_cast<int64_t>(a) - static_cast<int64_t>(rank));  // torch writes them negative
  b.floats("two", {}, {2.f}).floats("eps", {}, {eps});
  OnnxBuilder::attr(b.node("ReduceMean", "mean", {"x"}, {"m"}), "axes", axes);
  b.node("Sub", "sub", {"x", "m"}, {"d"});
  b.node("Pow", "pow", {"d", "two"}, {"p"});
  OnnxBuilder::attr(b.node("ReduceMean", "var", {"p"}, {"v"}), "axes", axes);
  b.node("Add", "add_eps", {"v", "eps"}, {"ve"});
  b.node("Sqrt", "sqrt", {"ve"}, {"s"});
  b.node("Div", "div", {"d", "s"}, {"nrm"});
  b.node("Mul", "mul", {"nrm", "scale"}, {c.bias ? "sc" : "y"});
  if (c.bias) b.node("Add", "add", {"sc", "bias"}, {"y"});
  return b.bytes();
}

TEST(ConverterLayerNorm, OpsetSeventeenAndDecomposedMatchThePlainDefinition) {
  std::mt19937 rng(41);
  const std::vector<Case> cases = {
      {{2, 12, 16}, -1, true},   // tokens [N, L, C], SwinIR's
      {{3, 5, 7}, 2, false},
      {{2, 4, 3, 5}, 1, true},   // a map over C, H, W
      {{2, 4, 3, 5}, -1, true},  // a map over W alone
      {{2, 6, 9}, 1, true},      // tokens over L and C
  };
  for (const Case& c : cases)
    for (bool decomposed : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "rank " << c.dims.size() << " axis " << c.axis << (decomposed ? " decomposed" : " opset 17"));
      const size_t rank = c.dims.size(), axis = static_cast<size_t>(c.axis < 0 ? c.axis + static_cast<int64_t>(rank) : c.axis);
      int64_t inner = 1, total = 1;
      for (size_t k = 0; k < rank; ++k) total *= c.dims[k], inner *= k >= axis ? c.dims[k] : 1;
      const auto scale = random_floats(rng, static_cast<size_t>(inner), 0.5f, 1.5f);
      const auto bias = c.bias ? random_floats(rng, static_cast<size_t>(inner)) : std::vector<float>{};
      auto x = random_floats(rng, static_cast<size_t>(total), -2.f, 2.f);
      for (size_t i = 0; i < x.size(); ++i) x[i] += 3.f * static_cast<float>(i % 3);  // an offset the mean must remove
      const auto model = converted_model(layer_norm_graph(c, decomposed, scale, bias, 1e-5f));
      const auto want = layer_norm_reference(x, c.dims, axis, scale, bias, 1e-5);
      for (int threads : {1, 2}) {
        Session s(model, {.threads = threads, .batch = static_cast<int>(c.dims[0])});
        std::vector<float> y;
        if (rank == 4) {
          y = nhwc_to_nchw(s.run({nhwc_from_nchw("x", x, c.dims[0], c.dims[1], c.dims[2], c.dims[3])})[0].f32, c.dims[0], c.dims[1],
                           c.dims[2] * c.dims[3]);
        } else {
          y = s.run({Tensor{"x", DType::kFloat32, Layout::kRowMajor, c.dims, x, {}}})[0].f32;
        }
        ASSERT_EQ(y.size(), want.size());
        float worst = 0;
        for (size_t i = 0; i < y.size(); ++i) worst = std::max(worst, std::abs(y[i] - want[i]));
        EXPECT_LE(worst, 2e-5f) << threads << " threads";
      }
    }
}

TEST(ConverterLayerNorm, TheOpAndTorchsNodesBecomeTheSameOps) {
  std::mt19937 rng(42);
  const Case c{{2, 12, 16}, -1, true};
  const auto scale = random_floats(rng, 16), bias = random_floats(rng, 16);
  EXPECT_EQ(op_kinds(*converted_model(layer_norm_graph(c, false, scale, bias, 1e-5f))),
            op_kinds(*converted_model(layer_norm_graph(c, true, scale, bias, 1e-5f))));
}

TEST(ConverterLayerNorm, RefusalsNameTheNode) {
  auto graph = [](const std::function<void(OnnxBuilder&, onnx::NodeProto&)>& edit) {
    OnnxBuilder b(17);
    b.input("x", {-1, 4, 6}).output("y").floats("scale", {6}, std::vector<float>(6, 1.f));
    auto& n = b.node("LayerNormalization", "ln", {"x", "scale"}, {"y"});
    edit(b, n);
    return b.bytes();
  };
  EXPECT_NE(convert_error(graph([](OnnxBuilder&, onnx::NodeProto& n) { OnnxBuilder::attr(n, "axis", int64_t{0}); })).find("'axis' = 0"),
            std::string::npos);
  EXPECT_NE(convert_error(graph([](OnnxBuilder&, onnx::NodeProto& n) { OnnxBuilder::attr(n, "stash_type", int64_t{0}); })).find("'stash_type'"),
            std::string::npos);
  OnnxBuilder c(17);
  c.input("x", {-1, 4, 6}).output("y").floats("scale", {6}, std::vector<float>(6, 1.f)).floats("c", {1, 4, 6}, std::vector<float>(24, 1.f));
  c.node("LayerNormalization", "ln", {"c", "scale"}, {"y"});
  const std::string constant = convert_error(c.bytes());
  EXPECT_NE(constant.find("'ln'"), std::string::npos) << constant;
  EXPECT_NE(constant.find("constant"), std::string::npos) << constant;
}

}  // namespace
}  // namespace edgegan
