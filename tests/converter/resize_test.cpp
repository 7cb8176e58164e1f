// Resize in the converter: attributes, scales or sizes, opset 18 axes, against the
// kernels' reference through a Session; every refusal names the node and attribute.
#include <gtest/gtest.h>

#include <functional>

#include "converter/converter.h"
#include "edgegan/edgegan.h"
#include "kernels_cpu/resize/resize.h"
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

void check(OnnxBuilder& b, int c, int h, int w, const cpu::ResizeShape& shape) {
  const auto model = Model::from_bytes(convert_onnx(b.bytes(), "r.onnx").egan);
  ASSERT_EQ(model->ops().size(), 1u);
  EXPECT_EQ(model->ops()[0].kind, "Resize");
  EXPECT_EQ(model->outputs()[0].dims, (std::vector<int64_t>{-1, shape.h.out, shape.w.out, c}));
  std::mt19937 rng(9);
  const auto x = random_floats(rng, static_cast<size_t>(2 * c * h * w));
  Session s(model, {.threads = 2, .batch = 2});
  const auto y = s.run({Tensor{"x", DType::kFloat32, Layout::kNHWC, {2, h, w, c}, x, {}}})[0];
  cpu::ResizeShape full = shape;
  full.batch = 2;
  full.channels = c;
  std::vector<float> ref(static_cast<size_t>(2 * shape.h.out * shape.w.out * c));
  cpu::resize_reference(full, x.data(), ref.data());
  EXPECT_LE(max_abs_diff(y.f32, ref), 2e-6f);
}

TEST(ConverterResize, ScalesAndModes) {
  struct Case {
    const char* mode;
    const char* coords;
    const char* nearest;
    cpu::ResizeParams params;
  };
  using M = cpu::ResizeMode;
  using C = cpu::ResizeCoordinates;
  using N = cpu::ResizeNearest;
  const std::vector<Case> cases = {
      {"nearest", "asymmetric", "floor", {M::kNearest, C::kAsymmetric, N::kFloor, -0.75f, false}},
      {"nearest", "half_pixel", "round_prefer_ceil", {M::kNearest, C::kHalfPixel, N::kRoundPreferCeil, -0.75f, false}},
      {"nearest", "tf_half_pixel_for_nn", "ceil", {M::kNearest, C::kTfHalfPixelForNn, N::kCeil, -0.75f, false}},
      {"linear", "pytorch_half_pixel", "round_prefer_floor", {M::kLinear, C::kPytorchHalfPixel, N::kRoundPreferFloor, -0.75f, false}},
      {"linear", "half_pixel_symmetric", "round_prefer_floor", {M::kLinear, C::kHalfPixelSymmetric, N::kRoundPreferFloor, -0.75f, false}},
      {"cubic", "align_corners", "round_prefer_floor", {M::kCubic, C::kAlignCorners, N::kRoundPreferFloor, -0.5f, true}},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(std::string(k.mode) + " " + k.coords);
    OnnxBuilder b;
    b.input("x", {-1, 3, 4, 5}).output("y").floats("scales", {4}, {1.f, 1.f, 1.5f, 0.6f});
    auto& n = b.node("Resize", "rs", {"x", "", "scales"}, {"y"});
    OnnxBuilder::attr(n, "mode", std::string(k.mode));
    OnnxBuilder::attr(n, "coordinate_transformation_mode", std::string(k.coords));
    OnnxBuilder::attr(n, "nearest_mode", std::string(k.nearest));
    OnnxBuilder::attr(n, "cubic_coeff_a", k.params.cubic_coeff_a);
    OnnxBuilder::attr(n, "exclude_outside", int64_t{k.params.exclude_outside ? 1 : 0});
    cpu::ResizeShape s;
    s.h = {4, 6, 1.5};
    s.w = {5, 3, 0.6f};  // floor(5 * 0.6f) = 3 (0.6f is a little above 0.6)
    s.params = k.params;
    check(b, 3, 4, 5, s);
  }
}

TEST(ConverterResize, SizesAndAxes) {
  {  // opset 11 form: roi and empty scales are constants, sizes for all four axes as torch
     // writes them (the batch and channels from Shape, concatenated with H and W)
    OnnxBuilder b(11);
    b.input("x", {-1, 2, 3, 4}).output("y").floats("roi", {0}, {}).floats("scales", {0}, {}).ints("hw", {2}, {7, 9});
    b.ints("zero", {1}, {0}).ints("two", {1}, {2});
    b.node("Shape", "shape", {"x"}, {"s"});
    b.node("Slice", "nc", {"s", "zero", "two", "zero"}, {"s2"});
    OnnxBuilder::attr(b.node("Concat", "cat", {"s2", "hw"}, {"sizes"}), "axis", int64_t{0});
    OnnxBuilder::attr(b.node("Resize", "rs", {"x", "roi", "scales", "sizes"}, {"y"}), "mode", std::string("linear"));
    cpu::ResizeShape s;
    s.h = {3, 7, 0};
    s.w = {4, 9, 0};
    s.params.mode = cpu::ResizeMode::kLinear;
    check(b, 2, 3, 4, s);
  }
  {  // opset 18 axes: sizes for [W, H] only
    OnnxBuilder b(17);
    b.input("x", {-1, 2, 3, 4}).output("y").ints("sizes", {2}, {2, 6});
    auto& n = b.node("Resize", "rs", {"x", "", "", "sizes"}, {"y"});
    OnnxBuilder::attr(n, "axes", std::vector<int64_t>{-1, 2});
    OnnxBuilder::attr(n, "keep_aspect_ratio_policy", std::string("stretch"));
    cpu::ResizeShape s;
    s.h = {3, 6, 0};
    s.w = {4, 2, 0};
    s.params.coordinates = cpu::ResizeCoordinates::kHalfPixel;
    check(b, 2, 3, 4, s);
  }
}

TEST(ConverterResize, RefusalsNameTheNodeAndAttribute) {
  struct ErrorCase {
    const char* name;
    std::function<void(onnx::NodeProto&)> attrs;
    std::vector<float> scales;
    std::vector<std::string> expected;
  };
  const std::vector<ErrorCase> cases = {
      {"crop and resize", [](onnx::NodeProto& n) { OnnxBuilder::attr(n, "coordinate_transformation_mode", std::string("tf_crop_and_resize")); },
       {1, 1, 2, 2}, {"'coordinate_transformation_mode'", "tf_crop_and_resize"}},
      {"antialias", [](onnx::NodeProto& n) { OnnxBuilder::attr(n, "antialias", int64_t{1}); }, {1, 1, 2, 2}, {"'antialias' = 1"}},
      {"aspect policy", [](onnx::NodeProto& n) { OnnxBuilder::attr(n, "keep_aspect_ratio_policy", std::string("not_larger")); },
       {1, 1, 2, 2}, {"'keep_aspect_ratio_policy'", "not_larger"}},
      {"unknown mode", [](onnx::NodeProto& n) { OnnxBuilder::attr(n, "mode", std::string("area")); }, {1, 1, 2, 2}, {"'mode'", "area"}},
      {"unknown nearest mode", [](onnx::NodeProto& n) { OnnxBuilder::attr(n, "nearest_mode", std::string("round")); }, {1, 1, 2, 2},
       {"'nearest_mode'", "round"}},
      {"channel scale", [](onnx::NodeProto&) {}, {1, 2, 2, 2}, {"'scales'", "axis 1 (channels)"}},
      {"batch scale", [](onnx::NodeProto&) {}, {2, 1, 2, 2}, {"'scales'", "axis 0 (batch)"}},
      {"wrong scales length", [](onnx::NodeProto&) {}, {2, 2}, {"'scales'", "expected 4"}},
      {"zero scale", [](onnx::NodeProto&) {}, {1, 1, 0, 2}, {"'scales'"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    OnnxBuilder b;
    b.input("x", {-1, 2, 3, 3}).output("y").floats("scales", {static_cast<int64_t>(c.scales.size())}, c.scales);
    auto& n = b.node("Resize", "up", {"x", "", "scales"}, {"y"});
    c.attrs(n);
    const std::string error = convert_error(b.bytes());
    ASSERT_FALSE(error.empty()) << "converted without an error";
    for (const auto& needle : c.expected) EXPECT_NE(error.find(needle), std::string::npos) << "message: " << error;
    EXPECT_NE(error.find("'up' (Resize)"), std::string::npos) << "message: " << error;
  }
  OnnxBuilder b;
  b.input("x", {-1, 2, 3, 3}).output("y");
  b.node("Resize", "up", {"x"}, {"y"});
  EXPECT_NE(convert_error(b.bytes()).find("neither input 'scales' nor input 'sizes'"), std::string::npos);
}

}  // namespace
}  // namespace edgegan
