// Window attention (SwinIR/HAT-class) in the converter: the rewrites of
// converter/window_patterns.cpp, each on a small graph built here, against plain loops
// over the ONNX layout; near misses left as exported and refused by name.
#include <gtest/gtest.h>

#include <cmath>
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
using testing::nhwc_to_nchw;
using testing::op_kinds;
using testing::OnnxBuilder;
using testing::random_floats;

constexpr int64_t kTokens = 5, kHeads = 2, kHeadDim = 3;

// x [N, L, 3·heads·d] -> qkv = x.reshape(N, L, 3, heads, d).permute(2, 0, 3, 1, 4), then
// q, k, v = qkv[0], qkv[1], qkv[2] as torch exports them (the indices a Constant node's
// scalar, an initializer's, and -1 for v), or, with `unbind`, q, k, v = qkv.unbind(0) (a
// Split of axis 0 into pieces of 1, each Squeezed; attributes before opset 13).
OnnxBuilder qkv_graph(int opset, bool unbind = false) {
  OnnxBuilder b(opset);
  b.input("x", {-1, kTokens, 3 * kHeads * kHeadDim}).output("y");
  b.ints("split", {5}, {0, kTokens, 3, kHeads, kHeadDim}).ints("one", {}, {1}).ints("minus_one", {}, {-1});
  b.node("Reshape", "reshape", {"x", "split"}, {"qkv5"});
  OnnxBuilder::attr(b.node("Transpose", "permute", {"qkv5"}, {"qkv"}), "perm", std::vector<int64_t>{2, 0, 3, 1, 4});
  if (unbind) {
    b.ints("ones", {3}, {1, 1, 1}).ints("axis0", {1}, {0});
    auto& split = b.node("Split", "unbind", opset >= 13 ? std::vector<std::string>{"qkv", "ones"} : std::vector<std::string>{"qkv"}, {"q1", "k1", "v1"});
    OnnxBuilder::attr(split, "axis", int64_t{0});
    if (opset < 13) OnnxBuilder::attr(split, "split", std::vector<int64_t>{1, 1, 1});
    for (const char* t : {"q", "k", "v"}) {
      const std::string piece = std::string(t) + "1";
      if (opset >= 13) b.node("Squeeze", std::string("squeeze_") + t, {piece, "axis0"}, {t});
      else OnnxBuilder::attr(b.node("Squeeze", std::string("squeeze_") + t, {piece}, {t}), "axes", std::vector<int64_t>{0});
    }
    return b;
  }
  auto& zero = b.node("Constant", "zero", {}, {"zero"});
  auto* value = zero.add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  value->mutable_t()->add_int64_data(0);
  b.node("Gather", "q", {"qkv", "zero"}, {"q"});
  b.node("Gather", "k", {"qkv", "one"}, {"k"});
  b.node("Gather", "v", {"qkv", "minus_one"}, {"v"});
  return b;
}

// x[n][l][(part·heads + h)·d + j]: part 0 q, 1 k, 2 v.
float qkv_at(const std::vector<float>& x, int64_t n, int64_t part, int64_t h, int64_t l, int64_t j) {
  return x[static_cast<size_t>((n * kTokens + l) * 3 * kHeads * kHeadDim + (part * kHeads + h) * kHeadDim + j)];
}

// softmax(q·kᵀ)·v per sample and head, from the packed x: [N, heads, L, d].
std::vector<double> attention_reference(const std::vector<float>& x, int64_t batch) {
  std::vector<double> y(static_cast<size_t>(batch * kHeads * kTokens * kHeadDim));
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t h = 0; h < kHeads; ++h)
      for (int64_t i = 0; i < kTokens; ++i) {
        std::vector<double> s(kTokens);
        double top = -1e300, sum = 0;
        for (int64_t j = 0; j < kTokens; ++j) {
          for (int64_t d = 0; d < kHeadDim; ++d) s[static_cast<size_t>(j)] += static_cast<double>(qkv_at(x, n, 0, h, i, d)) * qkv_at(x, n, 1, h, j, d);
          top = std::max(top, s[static_cast<size_t>(j)]);
        }
        for (auto& e : s) sum += (e = std::exp(e - top));
        for (int64_t d = 0; d < kHeadDim; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < kTokens; ++j) acc += s[static_cast<size_t>(j)] / sum * qkv_at(x, n, 2, h, j, d);
          y[static_cast<size_t>(((n * kHeads + h) * kTokens + i) * kHeadDim + d)] = acc;
        }
      }
  return y;
}

// The batch-moving permute read by qkv[0], qkv[1], qkv[2] converts (each Gather a Slice,
// a Squeeze, which are free reshapes or copies, and a Transpose keeping the batch first),
// and the attention on q, k, v computes what the loops compute, before and after opset 13
// (Squeeze's axes an attribute, then an input); so does qkv.unbind(0).
TEST(ConverterWindowAttention, BatchMovingPermuteReadByGathersConverts) {
  for (int form = 0; form < 4; ++form) {
    const int opset = form % 2 ? 17 : 12;
    const bool unbind = form >= 2;
    SCOPED_TRACE(std::to_string(opset) + (unbind ? " unbind" : " gathers"));
    OnnxBuilder b = qkv_graph(opset, unbind);
    OnnxBuilder::attr(b.node("Transpose", "kt", {"k"}, {"kt"}), "perm", std::vector<int64_t>{0, 1, 3, 2});
    b.node("MatMul", "scores", {"q", "kt"}, {"s"});
    OnnxBuilder::attr(b.node("Softmax", "softmax", {"s"}, {"a"}), "axis", int64_t{-1});
    b.node("MatMul", "mix", {"a", "v"}, {"y"});
    const auto model = converted_model(b.bytes());
    // The squeezed [N, L, heads, d] is a rank-4 tensor, stored NHWC as every one is: its
    // Reshape is a copy, and so is the Transpose after it.
    const std::vector<std::string> per_gather{"Slice", "Reshape", "Transpose"};
    std::vector<std::string> kinds{"Reshape"};
    for (int k = 0; k < 3; ++k) kinds.insert(kinds.end(), per_gather.begin(), per_gather.end());
    kinds.insert(kinds.end(), {"Transpose", "MatMul", "Softmax", "MatMul"});
    EXPECT_EQ(op_kinds(*model), kinds);
    std::mt19937 rng(51);
    for (int batch : {1, 3}) {
      const auto x = random_floats(rng, static_cast<size_t>(batch * kTokens * 3 * kHeads * kHeadDim));
      Session s(model, {.batch = batch});
      const auto y = s.run({Tensor{"x", DType::kFloat32, Layout::kRowMajor, {batch, kTokens, 3 * kHeads * kHeadDim}, x, {}}})[0];
      // y: [N, heads, L, d], stored NHWC [N, L, d, heads].
      const auto got = nhwc_to_nchw(y.f32, batch, kHeads, kTokens * kHeadDim);
      const auto want = attention_reference(x, batch);
      ASSERT_EQ(got.size(), want.size());
      for (size_t k = 0; k < want.size(); ++k) EXPECT_NEAR(got[k], want[k], 1e-5) << k;
    }
  }
}

// A Linear on tokens [N, L, C] (torch: MatMul with the constant weights, then the Add of
// its bias) is a Dense over the N·L rows with that bias and a following Relu fused; an Add
// of one constant per token does not fold into it (dim 1 is no channel of a Dense's) but is
// the ChannelAffine of the tokens read as the map [N, L, out], a relayout each way; the
// result is the loops' at batch 1 and 3. Over a rank-4 tensor, which the converter stores as a map, it is
// refused by name.
TEST(ConverterWindowAttention, LinearOnTokensIsADenseOverRows) {
  const int64_t tokens = 5, c = 4, hidden = 6, out = 3;
  std::mt19937 rng(52);
  const auto w1 = random_floats(rng, c * hidden), b1 = random_floats(rng, hidden), w2 = random_floats(rng, hidden * out),
             per_token = random_floats(rng, tokens);
  OnnxBuilder b;
  b.input("x", {-1, tokens, c}).output("y");
  b.floats("w1", {c, hidden}, w1).floats("b1", {hidden}, b1).floats("w2", {hidden, out}, w2).floats("t", {tokens, 1}, per_token);
  b.node("MatMul", "fc1", {"x", "w1"}, {"h"});
  b.node("Add", "fc1_bias", {"b1", "h"}, {"hb"});
  b.node("Relu", "relu", {"hb"}, {"r"});
  b.node("MatMul", "fc2", {"r", "w2"}, {"o"});
  b.node("Add", "per_token", {"o", "t"}, {"y"});
  const auto model = converted_model(b.bytes());
  EXPECT_EQ(op_kinds(*model), (std::vector<std::string>{"Dense", "Dense", "Reshape", "ChannelAffine", "Reshape"}));
  for (int batch : {1, 3}) {
    const auto x = random_floats(rng, static_cast<size_t>(batch * tokens * c));
    Session s(model, {.batch = batch});
    const auto y = s.run({Tensor{"x", DType::kFloat32, Layout::kRowMajor, {batch, tokens, c}, x, {}}})[0];
    EXPECT_EQ(y.shape, (std::vector<int64_t>{batch, tokens, out}));
    for (int64_t r = 0; r < batch * tokens; ++r) {
      std::vector<double> hid(static_cast<size_t>(hidden));
      for (int64_t j = 0; j < hidden; ++j) {
        double acc = b1[static_cast<size_t>(j)];
        for (int64_t i = 0; i < c; ++i) acc += static_cast<double>(x[static_cast<size_t>(r * c + i)]) * w1[static_cast<size_t>(i * hidden + j)];
        hid[static_cast<size_t>(j)] = std::max(acc, 0.0);
      }
      for (int64_t j = 0; j < out; ++j) {
        double acc = per_token[static_cast<size_t>(r % tokens)];
        for (int64_t i = 0; i < hidden; ++i) acc += hid[static_cast<size_t>(i)] * w2[static_cast<size_t>(i * out + j)];
        EXPECT_NEAR(y.f32[static_cast<size_t>(r * out + j)], acc, 1e-5) << r << " " << j;
      }
    }
  }
  OnnxBuilder map;
  map.input("x", {-1, 2, tokens, c}).output("y").floats("w1", {c, hidden}, w1);
  map.node("MatMul", "fc1", {"x", "w1"}, {"y"});
  const std::string e = convert_error(map.bytes());
  EXPECT_NE(e.find("node 'fc1' (MatMul)"), std::string::npos) << e;
  EXPECT_NE(e.find("stored as a map"), std::string::npos) << e;
}

// The attention's products once its windows are unfolded, [N, nW, heads, n, d] ·
// [N, nW, heads, d, n]: one rank-5 MatMul over the nW·heads matrices (an operand of
// [N, 1, 1, K, P] broadcasts), against the loops at batch 1 and 2; dims 1 and 2 that do
// not broadcast together are refused by name.
TEST(ConverterWindowAttention, RankFiveProductIsTheRankFourOneOverMergedDims) {
  const int64_t g = 2, h = 3, m = 4, k = 5, p = 2;
  for (bool broadcast : {false, true}) {
    SCOPED_TRACE(broadcast);
    const int64_t bg = broadcast ? 1 : g, bh = broadcast ? 1 : h;
    OnnxBuilder b;
    b.input("a", {-1, g, h, m, k}).input("b", {-1, bg, bh, k, p}).output("y");
    b.node("MatMul", "mm", {"a", "b"}, {"y"});
    const auto model = converted_model(b.bytes());
    EXPECT_EQ(op_kinds(*model), (std::vector<std::string>{"MatMul"}));
    std::mt19937 rng(54);
    for (int batch : {1, 2}) {
      const auto av = random_floats(rng, static_cast<size_t>(batch * g * h * m * k)), bv = random_floats(rng, static_cast<size_t>(batch * bg * bh * k * p));
      Session s(model, {.batch = batch});
      const auto y = s.run({Tensor{"a", DType::kFloat32, Layout::kRowMajor, {batch, g, h, m, k}, av, {}},
                            Tensor{"b", DType::kFloat32, Layout::kRowMajor, {batch, bg, bh, k, p}, bv, {}}})[0];
      ASSERT_EQ(y.shape, (std::vector<int64_t>{batch, g, h, m, p}));
      for (int64_t n = 0; n < batch; ++n)
        for (int64_t i = 0; i < g * h; ++i)
          for (int64_t r = 0; r < m; ++r)
            for (int64_t c = 0; c < p; ++c) {
              const int64_t bi = broadcast ? 0 : i;
              double acc = 0;
              for (int64_t q = 0; q < k; ++q)
                acc += static_cast<double>(av[static_cast<size_t>(((n * g * h + i) * m + r) * k + q)]) *
                       bv[static_cast<size_t>(((n * bg * bh + bi) * k + q) * p + c)];
              EXPECT_NEAR(y.f32[static_cast<size_t>(((n * g * h + i) * m + r) * p + c)], acc, 1e-5);
            }
    }
  }
  OnnxBuilder b;
  b.input("a", {-1, g, h, m, k}).input("b", {-1, g, 1, k, p}).output("y");
  b.node("MatMul", "mm", {"a", "b"}, {"y"});
  const std::string e = convert_error(b.bytes());
  EXPECT_NE(e.find("node 'mm' (MatMul): batch dimensions 1 and 2 do not broadcast together"), std::string::npos) << e;
}

// A batch-moving Transpose also read whole, or by a Gather along another axis, stays as
// exported: the conversion stops at the Gathers (a run-time Gather of its axis 0 is not an
// op) instead of computing anything.
TEST(ConverterWindowAttention, NearMissesAreLeftAndRefused) {
  {
    OnnxBuilder b = qkv_graph(17);
    b.node("Identity", "whole", {"qkv"}, {"y"});
    const std::string e = convert_error(b.bytes());
    EXPECT_NE(e.find("node 'q' (Gather)"), std::string::npos) << e;
  }
  {
    OnnxBuilder b = qkv_graph(17);
    b.ints("i", {}, {0});
    OnnxBuilder::attr(b.node("Gather", "other", {"qkv", "i"}, {"y"}), "axis", int64_t{1});
    const std::string e = convert_error(b.bytes());
    EXPECT_NE(e.find("node 'q' (Gather)"), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace edgegan
