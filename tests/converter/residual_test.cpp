// A residual/skip Add of two run-time tensors folds into the Conv or norm that produced
// one operand (Conv2D's and GroupNorm's `residual`): when that op is the operand's only
// reader and has no activation, the shapes agree exactly and the other operand exists
// before the op runs. Every other Add stays a Binary op. The fused models compute what
// the unfused graph does.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "converter/converter.h"
#include "edgegan/edgegan.h"
#include "kernels_cpu/conv2d/conv2d_reference.h"
#include "tests/converter/converted_model.h"
#include "tests/converter/converter_test_util.h"
#include "tests/converter/onnx_builder.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

using testing::max_abs_diff;
using testing::converted_model;
using testing::nhwc;
using testing::op_kinds;
using testing::OnnxBuilder;
using testing::random_floats;


int count(const Model& m, const std::string& kind) {
  const auto k = op_kinds(m);
  return static_cast<int>(std::count(k.begin(), k.end(), kind));
}

int residuals(const Model& m) {
  int n = 0;
  for (const auto& op : m.ops()) n += op.attributes.find("+ residual t") != std::string::npos;
  return n;
}

// An identity 3x3 conv (padding 1) on C channels, ONNX layout [C][C][3][3], times `gain`.
std::vector<float> identity3x3(int64_t c, float gain) {
  std::vector<float> w(static_cast<size_t>(c * c * 9), 0.f);
  for (int64_t k = 0; k < c; ++k) w[static_cast<size_t>((k * c + k) * 9 + 4)] = gain;
  return w;
}

void pads1(onnx::NodeProto& n) { OnnxBuilder::attr(n, "pads", std::vector<int64_t>{1, 1, 1, 1}); }

// y = x + conv(x): the graph input is the residual; relu after the Add stays its own op
// (the fused epilogue ends with the residual, so nothing folds in after it).
TEST(ResidualFusion, ConvPlusGraphInputFusesAndComputesTheSum) {
  for (bool relu_after : {false, true}) {
    SCOPED_TRACE(relu_after);
    OnnxBuilder b;
    b.input("x", {-1, 3, 5, 4}).output("y").floats("W", {3, 3, 3, 3}, identity3x3(3, 0.5f)).floats("B", {3}, {0.1f, -0.2f, 0.3f});
    pads1(b.node("Conv", "conv", {"x", "W", "B"}, {"c"}));
    b.node("Add", "skip", {"x", "c"}, {relu_after ? "s" : "y"});
    if (relu_after) b.node("Relu", "relu", {"s"}, {"y"});
    const auto model = converted_model(b.bytes());
    EXPECT_EQ(op_kinds(*model), relu_after ? (std::vector<std::string>{"Conv2D", "Elementwise"}) : std::vector<std::string>{"Conv2D"});
    EXPECT_EQ(model->ops()[0].name, "conv+skip");
    EXPECT_EQ(residuals(*model), 1);
    std::mt19937 rng(3);
    const auto x = random_floats(rng, 2 * 5 * 4 * 3);
    Session s(model, {.batch = 2});
    const auto y = s.run({nhwc("x", 2, 5, 4, 3, x)})[0];
    std::vector<float> want(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const float bias = i % 3 == 0 ? 0.1f : i % 3 == 1 ? -0.2f : 0.3f;
      want[i] = x[i] + (0.5f * x[i] + bias);
      if (relu_after) want[i] = std::max(want[i], 0.f);
    }
    EXPECT_LE(max_abs_diff(y.f32, want), 1e-6f);
  }
}

// CycleGAN's block: x + InstanceNorm(conv(x)) fuses into the norm (GroupNorm).
TEST(ResidualFusion, InstanceNormPlusSkipFusesIntoTheNorm) {
  OnnxBuilder b;
  std::mt19937 rng(4);
  b.input("x", {-1, 4, 3, 5}).output("y").floats("W", {4, 4, 3, 3}, random_floats(rng, 144));
  b.floats("g", {4}, {1.f, 2.f, 0.5f, 1.5f}).floats("s", {4}, {0.f, 0.1f, -0.1f, 0.2f});
  pads1(b.node("Conv", "conv", {"x", "W"}, {"c"}));
  b.node("InstanceNormalization", "in", {"c", "g", "s"}, {"n"});
  b.node("Add", "skip", {"n", "x"}, {"y"});
  const auto model = converted_model(b.bytes());
  EXPECT_EQ(op_kinds(*model), (std::vector<std::string>{"Conv2D", "GroupNorm"}));
  EXPECT_EQ(model->ops()[1].name, "in+skip");
  EXPECT_EQ(residuals(*model), 1);
}

// Both operands are fusable convolutions of the graph input: the later one takes the
// earlier one's output as its residual.
TEST(ResidualFusion, OfTwoCandidatesTheLaterProducerTakesIt) {
  OnnxBuilder b;
  b.input("x", {-1, 2, 4, 4}).output("y").floats("W1", {2, 2, 3, 3}, identity3x3(2, 2.f)).floats("W2", {2, 2, 3, 3}, identity3x3(2, 3.f));
  pads1(b.node("Conv", "c1", {"x", "W1"}, {"a"}));
  pads1(b.node("Conv", "c2", {"x", "W2"}, {"b"}));
  b.node("Add", "sum", {"a", "b"}, {"y"});
  const auto model = converted_model(b.bytes());
  ASSERT_EQ(op_kinds(*model), (std::vector<std::string>{"Conv2D", "Conv2D"}));
  EXPECT_EQ(model->ops()[1].name, "c2+sum");
  EXPECT_EQ(model->ops()[1].inputs.at(1), model->ops()[0].outputs.at(0));
  std::mt19937 rng(5);
  const auto x = random_floats(rng, 32);
  const auto y = Session(model, {}).run({nhwc("x", 1, 4, 4, 2, x)})[0];
  std::vector<float> want(x.size());
  for (size_t i = 0; i < x.size(); ++i) want[i] = 2.f * x[i] + 3.f * x[i];
  EXPECT_LE(max_abs_diff(y.f32, want), 1e-5f);
}

TEST(ResidualFusion, StaysABinaryOpWhereItCannotFuse) {
  std::mt19937 rng(6);
  {  // the producer has an activation: y = relu(conv(x)) + x
    OnnxBuilder b;
    b.input("x", {-1, 2, 4, 4}).output("y").floats("W", {2, 2, 3, 3}, random_floats(rng, 36));
    pads1(b.node("Conv", "conv", {"x", "W"}, {"c"}));
    b.node("Relu", "relu", {"c"}, {"r"});
    b.node("Add", "skip", {"r", "x"}, {"y"});
    const auto model = converted_model(b.bytes());
    EXPECT_EQ(op_kinds(*model), (std::vector<std::string>{"Conv2D", "Binary"}));
    EXPECT_EQ(residuals(*model), 0);
  }
  {  // the other operand is produced after the conv runs: y = conv(x) + sigmoid(x), sigmoid later
    OnnxBuilder b;
    b.input("x", {-1, 2, 4, 4}).output("y").floats("W", {2, 2, 3, 3}, random_floats(rng, 36));
    pads1(b.node("Conv", "conv", {"x", "W"}, {"c"}));
    b.node("Sigmoid", "later", {"x"}, {"s"});
    b.node("Add", "skip", {"c", "s"}, {"y"});
    const auto model = converted_model(b.bytes());
    EXPECT_EQ(op_kinds(*model), (std::vector<std::string>{"Conv2D", "Elementwise", "Binary"}));
  }
  {  // broadcasting: conv(x) [N,2,4,4] + z [N,2,1,1]
    OnnxBuilder b;
    b.input("x", {-1, 2, 4, 4}).input("z", {-1, 2, 1, 1}).output("y").floats("W", {2, 2, 3, 3}, random_floats(rng, 36));
    pads1(b.node("Conv", "conv", {"x", "W"}, {"c"}));
    b.node("Add", "skip", {"c", "z"}, {"y"});
    EXPECT_EQ(op_kinds(*converted_model(b.bytes())), (std::vector<std::string>{"Conv2D", "Binary"}));
  }
  {  // the conv's output has another reader (and is a graph output)
    OnnxBuilder b;
    b.input("x", {-1, 2, 4, 4}).output("y").output("c").floats("W", {2, 2, 3, 3}, random_floats(rng, 36));
    pads1(b.node("Conv", "conv", {"x", "W"}, {"c"}));
    b.node("Add", "skip", {"c", "x"}, {"y"});
    EXPECT_EQ(op_kinds(*converted_model(b.bytes())), (std::vector<std::string>{"Conv2D", "Binary"}));
  }
  {  // Sub is not a residual Add; nor is conv(x) + conv(x) of one tensor
    OnnxBuilder b;
    b.input("x", {-1, 2, 4, 4}).output("y").output("y2").floats("W", {2, 2, 3, 3}, random_floats(rng, 36));
    pads1(b.node("Conv", "conv", {"x", "W"}, {"c"}));
    b.node("Sub", "diff", {"c", "x"}, {"y"});
    pads1(b.node("Conv", "conv2", {"x", "W"}, {"d"}));
    b.node("Add", "twice", {"d", "d"}, {"y2"});
    EXPECT_EQ(op_kinds(*converted_model(b.bytes())), (std::vector<std::string>{"Conv2D", "Binary", "Conv2D", "Binary"}));
  }
  {  // a Mul by a constant after a fused residual does not fold into the conv's weights
    OnnxBuilder b;
    b.input("x", {-1, 2, 4, 4}).output("y").floats("W", {2, 2, 3, 3}, random_floats(rng, 36)).floats("k", {}, {0.2f});
    pads1(b.node("Conv", "conv", {"x", "W"}, {"c"}));
    b.node("Add", "skip", {"c", "x"}, {"s"});
    b.node("Mul", "scale", {"s", "k"}, {"y"});
    EXPECT_EQ(op_kinds(*converted_model(b.bytes())), (std::vector<std::string>{"Conv2D", "ChannelAffine"}));
  }
}

// A 1-D residual block (HiFi-GAN): the rank-3 graph input, relayouted once to NHWC for
// the conv, is the residual; the output leaves in ONNX order.
TEST(ResidualFusion, OneDimensionalMapFusesInNhwc) {
  OnnxBuilder b;
  b.input("x", {-1, 2, 7}).output("y").floats("W", {2, 2, 3}, {0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0});  // identity, k3 p1
  OnnxBuilder::attr(b.node("Conv", "conv", {"x", "W"}, {"c"}), "pads", std::vector<int64_t>{1, 1});
  b.node("Add", "skip", {"x", "c"}, {"y"});
  const auto model = converted_model(b.bytes());
  EXPECT_EQ(count(*model, "Binary"), 0);
  EXPECT_EQ(residuals(*model), 1);
  std::mt19937 rng(7);
  const auto x = random_floats(rng, 2 * 2 * 7);
  const auto y = Session(model, {.batch = 2}).run({Tensor{"x", DType::kFloat32, Layout::kRowMajor, {2, 2, 7}, x, {}}})[0];
  std::vector<float> want(x);
  for (float& v : want) v *= 2.f;
  EXPECT_LE(max_abs_diff(y.f32, want), 1e-6f);
}

// With a reflect Pad folded into the conv's input map (an IR pass after lowering) the
// residual is an input like the conv's: x + conv(pad(x)) reads x twice; a Pad whose
// output is also the residual has two readers and stays an op.
TEST(ResidualFusion, ComposesWithAFusedInputMap) {
  std::mt19937 rng(8);
  const auto x = random_floats(rng, 2 * 5 * 4 * 3);
  for (bool pad_is_residual : {false, true}) {
    SCOPED_TRACE(pad_is_residual);
    OnnxBuilder b;
    b.input("x", {-1, 3, 5, 4}).output("y").floats("W", {3, 3, 3, 3}, identity3x3(3, 1.f)).ints("pads", {8}, {0, 0, 1, 1, 0, 0, 1, 1});
    OnnxBuilder::attr(b.node("Pad", "pad", {"x", "pads"}, {"p"}), "mode", std::string("reflect"));
    if (pad_is_residual) {  // y = p + conv(p) on the padded 7x6 map, conv padded by 1: 2p
      pads1(b.node("Conv", "conv", {"p", "W"}, {"c"}));
      b.node("Add", "skip", {"p", "c"}, {"y"});
    } else {  // y = x + conv(pad(x)), an unpadded 3x3 conv: 2x
      b.node("Conv", "conv", {"p", "W"}, {"c"});
      b.node("Add", "skip", {"x", "c"}, {"y"});
    }
    const auto model = converted_model(b.bytes());
    EXPECT_EQ(op_kinds(*model), pad_is_residual ? (std::vector<std::string>{"Pad", "Conv2D"}) : std::vector<std::string>{"Conv2D"});
    EXPECT_EQ(residuals(*model), 1);
    const auto y = Session(model, {.batch = 2}).run({nhwc("x", 2, 5, 4, 3, x)})[0];
    std::vector<float> want;
    if (!pad_is_residual) {
      for (float v : x) want.push_back(2.f * v);
    } else {  // reflect: row -1 is row 1, row H is row H-2
      auto src = [](int64_t i, int64_t n) { return i < 0 ? -i : i >= n ? 2 * n - 2 - i : i; };
      for (int64_t s = 0; s < 2; ++s)
        for (int64_t h = -1; h <= 5; ++h)
          for (int64_t w = -1; w <= 4; ++w)
            for (int64_t c = 0; c < 3; ++c) want.push_back(2.f * x[static_cast<size_t>(((s * 5 + src(h, 5)) * 4 + src(w, 4)) * 3 + c)]);
    }
    EXPECT_LE(max_abs_diff(y.f32, want), 1e-6f);
  }
}

std::string read_bytes(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// The zoo generators' residual and skip Adds: SRGAN's (x + BN(conv)), ESRGAN's RRDB
// (x + 0.2*conv, the 0.2 in the weights) and CycleGAN's (x + InstanceNorm(conv)) fold
// into their producers; the Binary ops left are those that cannot (the RRDB's outer
// 0.2 scaling of a residual output, the long skip over a block of residuals).
TEST(ResidualFusion, ZooGeneratorsFuseTheirResidualAdds) {
  const std::filesystem::path cases = std::filesystem::path(EDGEGAN_SOURCE_DIR) / "tests/golden/cases";
  struct Zoo {
    const char* name;
    int binaries, fused;
  };
  for (const Zoo& z : {Zoo{"zoo_srgan", 0, 3}, Zoo{"zoo_esrgan_rrdb", 1, 4}, Zoo{"zoo_cyclegan_resnet", 0, 2}}) {
    SCOPED_TRACE(z.name);
    const auto model = converted_model(read_bytes(cases / z.name / "model.onnx"));
    EXPECT_EQ(count(*model, "Binary"), z.binaries);
    EXPECT_EQ(residuals(*model), z.fused);
  }
}

}  // namespace
}  // namespace edgegan
