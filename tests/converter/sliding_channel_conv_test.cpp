// SlidingChannelConv in the converter: a hand-built channel stack (Gather, k3 stride 2
// pads, bias) becomes one op that matches the kernels' reference through a Session; a
// gather whose windows do not start at channel 0 stays a gather (Slices + Concat) and a
// grouped Conv2D; run-time Gathers the engine cannot run are refused naming node and attribute.
#include <gtest/gtest.h>

#include "converter/converter.h"
#include "edgegan/edgegan.h"
#include "kernels_cpu/sliding_channel_conv/sliding_channel_conv.h"
#include "tests/converter/convert_error.h"
#include "tests/converter/onnx_builder.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

using converter::convert_onnx;
using testing::convert_error;
using testing::max_abs_diff;
using testing::OnnxBuilder;
using testing::random_floats;

// x [N, 6, 5, 7] -> x[:, idx] -> Conv k3 s2 p1 group `cout`, weights [cout][gw][3][3] + bias.
std::string channel_stack_model(const std::vector<int64_t>& idx, int64_t cout, const std::vector<float>& w, const std::vector<float>& b) {
  OnnxBuilder m;
  const int64_t gw = static_cast<int64_t>(idx.size()) / cout;
  m.input("x", {-1, 6, 5, 7}).output("y").ints("idx", {static_cast<int64_t>(idx.size())}, idx).floats("w", {cout, gw, 3, 3}, w).floats("b", {cout}, b);
  OnnxBuilder::attr(m.node("Gather", "stack", {"x", "idx"}, {"s"}), "axis", int64_t{1});
  auto& conv = m.node("Conv", "scc", {"s", "w", "b"}, {"y"});
  OnnxBuilder::attr(conv, "group", cout);
  OnnxBuilder::attr(conv, "kernel_shape", std::vector<int64_t>{3, 3});
  OnnxBuilder::attr(conv, "strides", std::vector<int64_t>{2, 2});
  OnnxBuilder::attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  return m.bytes();
}

TEST(ConverterSlidingChannelConv, StridedKernelMatchesTheReference) {
  std::mt19937 rng(4);
  // Cin 6, window 4, start stride 3 (co 25%): windows 0-3, 3-6 (wraps), 0-3, ...; Cout 5.
  const int64_t cout = 5, gw = 4;
  std::vector<int64_t> idx;
  for (int64_t o = 0; o < cout; ++o)
    for (int64_t j = 0; j < gw; ++j) idx.push_back((o * 3 + j) % 6);
  const std::vector<float> w = random_floats(rng, static_cast<size_t>(cout * gw * 9)), b = random_floats(rng, static_cast<size_t>(cout));
  const auto model = Model::from_bytes(convert_onnx(channel_stack_model(idx, cout, w, b), "scc.onnx").egan);
  ASSERT_EQ(model->ops().size(), 1u);
  EXPECT_EQ(model->ops()[0].kind, "SlidingChannelConv");
  EXPECT_NE(model->ops()[0].attributes.find("window 4 start stride 3 period 2"), std::string::npos) << model->ops()[0].attributes;

  cpu::ConvShape s{2, 6, cout, {5, 3, 2, 1, 1, 1, 3}, {7, 3, 2, 1, 1, 1, 4}};
  const cpu::SlidingChannelPlan plan = cpu::plan_sliding_channel_conv(s, gw, cpu::sliding_channel_conv_starts(6, cout, 3));
  const std::vector<float> x = random_floats(rng, 2 * 5 * 7 * 6);
  std::vector<float> want(static_cast<size_t>(2 * 3 * 4 * cout));
  cpu::sliding_channel_conv_reference(plan, x.data(), w.data(), want.data(), cpu::Epilogue{b.data()});
  for (int threads : {1, 2}) {
    Session session(model, {.threads = threads, .batch = 2});
    const auto y = session.run({Tensor{"x", DType::kFloat32, Layout::kNHWC, {2, 5, 7, 6}, x, {}}})[0];
    EXPECT_LT(max_abs_diff(y.f32, want), 1e-5f);
  }
}

TEST(ConverterSlidingChannelConv, WindowsNotFromChannelZeroStayAGather) {
  std::mt19937 rng(6);
  std::vector<int64_t> idx;  // windows of 2 starting at 1, 3, 5: a rotated table
  for (int64_t o = 0; o < 3; ++o)
    for (int64_t j = 0; j < 2; ++j) idx.push_back((1 + 2 * o + j) % 6);
  const auto model = Model::from_bytes(
      convert_onnx(channel_stack_model(idx, 3, random_floats(rng, 3 * 2 * 9), random_floats(rng, 3)), "g.onnx").egan);
  int scc = 0, conv = 0;
  for (const OpInfo& op : model->ops()) {
    scc += op.kind == "SlidingChannelConv";
    conv += op.kind == "Conv2D";
  }
  EXPECT_EQ(scc, 0);
  EXPECT_EQ(conv, 1);
}

TEST(ConverterSlidingChannelConv, RunTimeGathersItCannotRunAreNamedErrors) {
  const auto gather = [](std::vector<int64_t> idx_dims, std::vector<int64_t> idx, int64_t axis) {
    OnnxBuilder m;
    m.input("x", {-1, 6, 5, 7}).output("y").ints("idx", idx_dims, idx);
    OnnxBuilder::attr(m.node("Gather", "pick", {"x", "idx"}, {"y"}), "axis", axis);
    return convert_error(m.bytes());
  };
  EXPECT_EQ(gather({3}, {5, 0, -1}, 1), "");  // a plain channel gather converts (Slices + Concat)
  const std::string axis = gather({2}, {0, 1}, 2);
  EXPECT_NE(axis.find("'pick'"), std::string::npos) << axis;
  EXPECT_NE(axis.find("'axis' = 2"), std::string::npos) << axis;
  const std::string range = gather({2}, {0, 6}, 1);
  EXPECT_NE(range.find("'pick'"), std::string::npos) << range;
  EXPECT_NE(range.find("'indices' holds 6"), std::string::npos) << range;
  const std::string rank = gather({1, 2}, {0, 1}, 1);
  EXPECT_NE(rank.find("'pick'"), std::string::npos) << rank;
  EXPECT_NE(rank.find("'indices'"), std::string::npos) << rank;
}

}  // namespace
}  // namespace edgegan
