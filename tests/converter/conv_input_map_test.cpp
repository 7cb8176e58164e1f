// Pads and nearest Resizes folded into the Conv2D that reads them (an input map): the
// chain nearest Resize -> reflect Pad -> Conv becomes one op whose output equals the
// three kernels' references run one after the other; what must stay an op does.
#include <gtest/gtest.h>

#include "converter/converter.h"
#include "edgegan/edgegan.h"
#include "kernels_cpu/conv2d/conv2d_reference.h"
#include "kernels_cpu/pad/pad.h"
#include "kernels_cpu/resize/resize.h"
#include "tests/converter/converted_model.h"
#include "tests/converter/onnx_builder.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

using converter::convert_onnx;
using testing::max_abs_diff;
using testing::converted_model;
using testing::op_kinds;
using testing::OnnxBuilder;
using testing::random_floats;


TEST(ConverterConvInputMap, UpsamplePadConvIsOneOpAndMatchesTheReferences) {
  std::mt19937 rng(31);
  const int cin = 5, cout = 4, h = 3, w = 4, batch = 2;
  const auto weights = random_floats(rng, cout * cin * 9), bias = random_floats(rng, cout);
  for (const char* mode : {"reflect", "edge", "wrap"}) {
    SCOPED_TRACE(mode);
    OnnxBuilder b;
    b.input("x", {-1, cin, h, w}).output("y").floats("roi", {0}, {}).floats("scales", {4}, {1, 1, 2, 3});
    b.ints("pads", {8}, {0, 0, 1, 2, 0, 0, 2, 1}).floats("W", {cout, cin, 3, 3}, weights).floats("B", {cout}, bias);
    auto& resize = b.node("Resize", "up", {"x", "roi", "scales"}, {"u"});
    OnnxBuilder::attr(resize, "mode", std::string("nearest"));
    OnnxBuilder::attr(resize, "coordinate_transformation_mode", std::string("asymmetric"));
    OnnxBuilder::attr(resize, "nearest_mode", std::string("floor"));
    OnnxBuilder::attr(b.node("Pad", "pad", {"u", "pads"}, {"p"}), "mode", std::string(mode));
    OnnxBuilder::attr(b.node("Conv", "conv", {"p", "W", "B"}, {"y"}), "strides", std::vector<int64_t>{1, 2});
    const auto model = Model::from_bytes(convert_onnx(b.bytes(), "upc.onnx").egan);
    ASSERT_EQ(op_kinds(*model), std::vector<std::string>{"Conv2D"});
    EXPECT_EQ(model->ops()[0].name, "up+pad+conv");
    EXPECT_NE(model->ops()[0].attributes.find("reads 3x4 through a fused input map: nearest x2x3, then"), std::string::npos) << model->ops()[0].attributes;
    EXPECT_NE(model->ops()[0].attributes.find("pads(t,l,b,r) 1,2,2,1 -> 9x15"), std::string::npos) << model->ops()[0].attributes;

    const auto x = random_floats(rng, batch * h * w * cin);
    cpu::ResizeShape rs;
    rs.batch = batch, rs.channels = cin, rs.h = {h, 2 * h, 2}, rs.w = {w, 3 * w, 3};
    rs.params = {cpu::ResizeMode::kNearest, cpu::ResizeCoordinates::kAsymmetric, cpu::ResizeNearest::kFloor, -0.75f, false};
    std::vector<float> up(static_cast<size_t>(batch * 2 * h * 3 * w * cin));
    cpu::resize_reference(rs, x.data(), up.data());
    cpu::PadShape ps;
    ps.batch = batch, ps.channels = cin, ps.h = {2 * h, 1, 2}, ps.w = {3 * w, 2, 1};
    ps.mode = std::string(mode) == "reflect" ? cpu::PadMode::kReflect : std::string(mode) == "edge" ? cpu::PadMode::kEdge : cpu::PadMode::kWrap;
    std::vector<float> padded(static_cast<size_t>(batch * ps.h.out() * ps.w.out() * cin));
    cpu::pad_reference(ps, up.data(), padded.data());
    const int64_t oh = ps.h.out() - 2, ow = (ps.w.out() - 3) / 2 + 1;
    const cpu::ConvShape cs{batch, cin, cout, {ps.h.out(), 3, 1, 1, 0, 0, oh}, {ps.w.out(), 3, 2, 1, 0, 0, ow}};
    std::vector<float> ref(static_cast<size_t>(batch * oh * ow * cout));
    cpu::conv2d_reference(cs, padded.data(), weights.data(), ref.data(), {bias.data(), cpu::Activation::kNone, 0});
    for (int threads : {1, 2}) {
      Session s(model, {.threads = threads, .batch = batch});
      const auto y = s.run({Tensor{"x", DType::kFloat32, Layout::kNHWC, {batch, h, w, cin}, x, {}}})[0];
      ASSERT_EQ(y.shape, (std::vector<int64_t>{batch, oh, ow, cout}));
      EXPECT_LE(max_abs_diff(y.f32, ref), 1e-5f);
    }
  }
}

TEST(ConverterConvInputMap, ReflectPadBeforeA1DConvFolds) {
  OnnxBuilder b;
  b.input("x", {-1, 2, 6}).output("y").ints("pads", {6}, {0, 0, 3, 0, 0, 3}).floats("W", {2, 2, 7}, std::vector<float>(28, 0.5f));
  OnnxBuilder::attr(b.node("Pad", "pad", {"x", "pads"}, {"p"}), "mode", std::string("reflect"));
  b.node("Conv", "conv", {"p", "W"}, {"y"});
  const auto model = Model::from_bytes(convert_onnx(b.bytes(), "pc1.onnx").egan);
  // The 1-D map is stored [N, 1, L, C]: a Reshape into it, the convolution, one back.
  int convs = 0;
  for (const auto& op : model->ops()) {
    EXPECT_NE(op.kind, "Pad");
    if (op.kind != "Conv2D") continue;
    ++convs;
    EXPECT_NE(op.attributes.find("reads 1x6 through a fused input map: Reflect pads(t,l,b,r) 0,3,0,3 -> 1x12"), std::string::npos) << op.attributes;
  }
  EXPECT_EQ(convs, 1);
}

TEST(ConverterConvInputMap, WhatCannotFoldStaysAnOp) {
  const std::vector<float> w(8, 0.25f);
  {  // a linear Resize blends pixels: no index map
    OnnxBuilder b;
    b.input("x", {-1, 2, 3, 3}).output("y").floats("roi", {0}, {}).floats("scales", {4}, {1, 1, 2, 2}).floats("W", {4, 2, 1, 1}, w);
    OnnxBuilder::attr(b.node("Resize", "up", {"x", "roi", "scales"}, {"u"}), "mode", std::string("linear"));
    b.node("Conv", "conv", {"u", "W"}, {"y"});
    EXPECT_EQ(op_kinds(*Model::from_bytes(convert_onnx(b.bytes(), "a.onnx").egan)), (std::vector<std::string>{"Resize", "Conv2D"}));
  }
  {  // a nearest Resize that shrinks the map
    OnnxBuilder b;
    b.input("x", {-1, 2, 4, 4}).output("y").floats("roi", {0}, {}).floats("scales", {4}, {1, 1, 0.5f, 0.5f}).floats("W", {4, 2, 1, 1}, w);
    OnnxBuilder::attr(b.node("Resize", "down", {"x", "roi", "scales"}, {"u"}), "mode", std::string("nearest"));
    b.node("Conv", "conv", {"u", "W"}, {"y"});
    EXPECT_EQ(op_kinds(*Model::from_bytes(convert_onnx(b.bytes(), "b.onnx").egan)), (std::vector<std::string>{"Resize", "Conv2D"}));
  }
  {  // a reflect Pad that is also a graph output
    OnnxBuilder b;
    b.input("x", {-1, 2, 3, 3}).output("y").output("p").ints("pads", {8}, {0, 0, 1, 1, 0, 0, 1, 1}).floats("W", {4, 2, 1, 1}, w);
    OnnxBuilder::attr(b.node("Pad", "pad", {"x", "pads"}, {"p"}), "mode", std::string("reflect"));
    b.node("Conv", "conv", {"p", "W"}, {"y"});
    EXPECT_EQ(op_kinds(*Model::from_bytes(convert_onnx(b.bytes(), "c.onnx").egan)), (std::vector<std::string>{"Pad", "Conv2D"}));
  }
  {  // a constant Pad of a value other than zero
    OnnxBuilder b;
    b.input("x", {-1, 2, 3, 3}).output("y").ints("pads", {8}, {0, 0, 1, 1, 0, 0, 1, 1}).floats("v", {}, {0.5f}).floats("W", {4, 2, 1, 1}, w);
    b.node("Pad", "pad", {"x", "pads", "v"}, {"p"});
    b.node("Conv", "conv", {"p", "W"}, {"y"});
    EXPECT_EQ(op_kinds(*Model::from_bytes(convert_onnx(b.bytes(), "d.onnx").egan)), (std::vector<std::string>{"Pad", "Conv2D"}));
  }
}

}  // namespace
}  // namespace edgegan
