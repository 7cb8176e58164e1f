// Pad in the converter: every mode against the kernels' reference through a Session,
// the constant zero Pad folded into the Conv after it, and the refusals.
#include <gtest/gtest.h>

#include <functional>

#include "converter/converter.h"
#include "edgegan/edgegan.h"
#include "kernels_cpu/conv2d/conv2d_reference.h"
#include "kernels_cpu/pad/pad.h"
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

TEST(ConverterPad, EveryModeMatchesTheReference) {
  std::mt19937 rng(25);
  const int c = 3, h = 4, w = 5;
  for (const char* mode : {"constant", "reflect", "edge", "wrap"}) {
    SCOPED_TRACE(mode);
    OnnxBuilder b;
    // NCHW pads [n, c, top, left, n, c, bottom, right]: crop one row at the top.
    b.input("x", {-1, c, h, w}).output("y").ints("pads", {8}, {0, 0, -1, 2, 0, 0, 3, 1}).floats("v", {}, {0.5f});
    OnnxBuilder::attr(b.node("Pad", "pad", {"x", "pads", "v"}, {"y"}), "mode", std::string(mode));
    const auto model = Model::from_bytes(convert_onnx(b.bytes(), "p.onnx").egan);
    ASSERT_EQ(model->ops().size(), 1u);
    EXPECT_EQ(model->ops()[0].kind, "Pad");
    Session s(model, {.batch = 2});
    const auto x = random_floats(rng, 2 * h * w * c);
    const auto y = s.run({Tensor{"x", DType::kFloat32, Layout::kNHWC, {2, h, w, c}, x, {}}})[0];
    cpu::PadShape shape;
    shape.batch = 2;
    shape.channels = c;
    shape.h = {h, -1, 3};
    shape.w = {w, 2, 1};
    shape.mode = std::string(mode) == "constant" ? cpu::PadMode::kConstant
                 : std::string(mode) == "reflect" ? cpu::PadMode::kReflect
                 : std::string(mode) == "edge"    ? cpu::PadMode::kEdge
                                                  : cpu::PadMode::kWrap;
    shape.value = 0.5f;
    std::vector<float> ref(static_cast<size_t>(2 * shape.h.out() * shape.w.out() * c));
    cpu::pad_reference(shape, x.data(), ref.data());
    EXPECT_EQ(y.shape, (std::vector<int64_t>{2, h + 2, w + 3, c}));
    EXPECT_EQ(max_abs_diff(y.f32, ref), 0.f);
  }
}

// edgegan_align grows the far pads at each planned size until the padded sides are
// multiples of the alignment; edgegan_size_scale with a fifth input crops (or pads) the
// far sides to that input's size: over random sizes, modes and near pads, the padded map
// equals the reference pad with the far pads computed here, and the crop of the near
// pads back to x's size gives x itself.
TEST(ConverterPad, AlignAndSizeOfFollowThePlannedSize) {
  std::mt19937 rng(27);
  const int c = 2;
  const char* modes[] = {"constant", "reflect", "edge", "wrap"};
  for (int trial = 0; trial < 12; ++trial) {
    const int64_t align = 2 + static_cast<int64_t>(rng() % 4), top = rng() % 4, left = rng() % 4, bottom = rng() % 3, right = rng() % 3;
    const char* mode = modes[rng() % 4];
    OnnxBuilder b;
    b.input("x", {-1, c, 8, 8}).output("p").output("y");
    b.ints("pads", {8}, {0, 0, top, left, 0, 0, bottom, right}).ints("crop", {8}, {0, 0, -top, -left, 0, 0, 0, 0});
    auto& pad = b.node("Pad", "pad", {"x", "pads"}, {"p"});
    OnnxBuilder::attr(pad, "mode", std::string(mode));
    OnnxBuilder::attr(pad, "edgegan_align", align);
    OnnxBuilder::attr(b.node("Pad", "crop", {"p", "crop", "", "", "x"}, {"y"}), "edgegan_size_scale", int64_t{1});
    const auto file = Model::from_bytes(convert_onnx(b.bytes(), "a.onnx").egan);
    for (int size = 0; size < 2; ++size) {
      const int64_t h = 1 + rng() % 13, w = 1 + rng() % 13;
      SCOPED_TRACE(std::string(mode) + " align " + std::to_string(align) + " at " + std::to_string(h) + "x" + std::to_string(w));
      Session s(Model::at_input_size(file, h, w), {.batch = 1});
      const auto x = random_floats(rng, static_cast<size_t>(h * w * c));
      const auto out = s.run({Tensor{"x", DType::kFloat32, Layout::kNHWC, {1, h, w, c}, x, {}}});
      cpu::PadShape shape;
      shape.channels = c;
      shape.h = {h, top, bottom + (align - (h + top + bottom) % align) % align};
      shape.w = {w, left, right + (align - (w + left + right) % align) % align};
      const std::string m = mode;
      shape.mode = m == "constant" ? cpu::PadMode::kConstant : m == "reflect" ? cpu::PadMode::kReflect : m == "edge" ? cpu::PadMode::kEdge : cpu::PadMode::kWrap;
      std::vector<float> ref(static_cast<size_t>(shape.h.out() * shape.w.out() * c));
      cpu::pad_reference(shape, x.data(), ref.data());
      ASSERT_EQ(out[0].shape, (std::vector<int64_t>{1, shape.h.out(), shape.w.out(), c}));
      EXPECT_EQ(shape.h.out() % align, 0);
      EXPECT_EQ(max_abs_diff(out[0].f32, ref), 0.f);
      ASSERT_EQ(out[1].shape, (std::vector<int64_t>{1, h, w, c}));
      EXPECT_EQ(max_abs_diff(out[1].f32, x), 0.f);
    }
  }
}

TEST(ConverterPad, AxesInputPadsOnlyTheNamedAxes) {
  OnnxBuilder b(17);
  b.input("x", {-1, 2, 3, 3}).output("y").ints("pads", {4}, {1, 0, 2, 1}).ints("axes", {2}, {-1, 2});
  OnnxBuilder::attr(b.node("Pad", "pad", {"x", "pads", "", "axes"}, {"y"}), "mode", std::string("edge"));
  const auto model = Model::from_bytes(convert_onnx(b.bytes(), "p.onnx").egan);
  // axes [-1 (W), 2 (H)]: W begins 1 ends 2, H begins 0 ends 1.
  EXPECT_EQ(model->outputs()[0].dims, (std::vector<int64_t>{-1, 4, 6, 2}));
  EXPECT_NE(model->ops()[0].attributes.find("pads(t,l,b,r) 0,1,1,2"), std::string::npos) << model->ops()[0].attributes;
}

TEST(ConverterPad, ConstantZeroPadFoldsIntoTheConv) {
  std::mt19937 rng(26);
  const int cin = 3, cout = 4, h = 5, w = 6;
  const auto weights = random_floats(rng, cout * cin * 9), bias = random_floats(rng, cout);
  OnnxBuilder b;
  b.input("x", {-1, cin, h, w}).output("y").ints("pads", {8}, {0, 0, 2, 1, 0, 0, 0, 3}).floats("W", {cout, cin, 3, 3}, weights);
  b.floats("B", {cout}, bias).floats("zero", {}, {0.f});
  b.node("Pad", "pad", {"x", "pads", "zero"}, {"p"});
  OnnxBuilder::attr(b.node("Conv", "conv", {"p", "W", "B"}, {"y"}), "pads", std::vector<int64_t>{1, 0, 1, 1});
  const auto model = Model::from_bytes(convert_onnx(b.bytes(), "pc.onnx").egan);
  ASSERT_EQ(model->ops().size(), 1u);
  EXPECT_EQ(model->ops()[0].kind, "Conv2D");
  EXPECT_EQ(model->ops()[0].name, "pad+conv");
  Session s(model, {.batch = 1});
  const auto x = random_floats(rng, h * w * cin);
  const auto y = s.run({Tensor{"x", DType::kFloat32, Layout::kNHWC, {1, h, w, cin}, x, {}}})[0];
  // Pads top 2+1, left 1+0, bottom 0+1, right 3+1.
  cpu::ConvShape shape{1, cin, cout, {h, 3, 1, 1, 3, 1, h + 2}, {w, 3, 1, 1, 1, 4, w + 3}};
  std::vector<float> ref(y.f32.size());
  cpu::conv2d_reference(shape, x.data(), weights.data(), ref.data(), {bias.data(), cpu::Activation::kNone, 0});
  EXPECT_LE(max_abs_diff(y.f32, ref), 1e-5f);
}

TEST(ConverterPad, NclMapsPadAlongL) {
  std::mt19937 rng(27);
  const int c = 3, len = 6;
  OnnxBuilder b;
  b.input("x", {-1, c, len}).output("y").ints("pads", {6}, {0, 0, 3, 0, 0, 2});
  OnnxBuilder::attr(b.node("Pad", "pad", {"x", "pads"}, {"y"}), "mode", std::string("reflect"));
  const auto model = Model::from_bytes(convert_onnx(b.bytes(), "p.onnx").egan);
  Session s(model, {.batch = 1});
  const auto x = random_floats(rng, c * len);  // ONNX order [1, C, L]
  const auto y = s.run({Tensor{"x", DType::kFloat32, Layout::kRowMajor, {1, c, len}, x, {}}})[0];
  ASSERT_EQ(y.shape, (std::vector<int64_t>{1, c, len + 5}));
  for (int k = 0; k < c; ++k)
    for (int o = 0; o < len + 5; ++o) {
      const int64_t i = cpu::pad_source({len, 3, 2}, cpu::PadMode::kReflect, o);
      EXPECT_EQ(y.f32[static_cast<size_t>(k * (len + 5) + o)], x[static_cast<size_t>(k * len + i)]) << k << "," << o;
    }
}

TEST(ConverterPad, NonZeroOrReadTwicePadsStayOps) {
  OnnxBuilder b;
  b.input("x", {-1, 2, 3, 3}).output("y").output("p").ints("pads", {8}, {0, 0, 1, 1, 0, 0, 1, 1});
  b.floats("W", {2, 2, 1, 1}, {1, 0, 0, 1});
  b.node("Pad", "pad", {"x", "pads"}, {"p"});
  b.node("Conv", "conv", {"p", "W"}, {"y"});
  const auto model = Model::from_bytes(convert_onnx(b.bytes(), "pc.onnx").egan);
  ASSERT_EQ(model->ops().size(), 2u);
  EXPECT_EQ(model->ops()[0].kind, "Pad");
}

struct ErrorCase {
  const char* name;
  std::function<void(OnnxBuilder&)> build;
  std::vector<std::string> expected;
};

// SwinIR's check_image_size pads the picture to the window multiple with pads computed
// from its shape, (ws - h % ws) % ws: ONNX Mod (fmod = 0, the divisor's sign) folds with
// the rest of the shape arithmetic, and fmod = 1 takes the dividend's sign (C's fmod).
TEST(ConverterPad, PadsComputedWithModFold) {
  std::mt19937 rng(26);
  const int c = 3, h = 6, w = 5;
  OnnxBuilder b;
  b.input("x", {-1, c, h, w}).output("y");
  b.ints("i2", {1}, {2}).ints("i3", {1}, {3}).ints("ws", {1}, {4}).ints("zero", {1}, {0}).ints("zeros", {2}, {0, 0});
  b.ints("minus7", {1}, {-7});
  b.node("Shape", "shape", {"x"}, {"s"});
  b.node("Gather", "h", {"s", "i2"}, {"h"});
  b.node("Gather", "w", {"s", "i3"}, {"w"});
  b.node("Mod", "h_mod", {"h", "ws"}, {"h_mod"});
  b.node("Sub", "h_rest", {"ws", "h_mod"}, {"h_rest"});
  b.node("Mod", "ph", {"h_rest", "ws"}, {"ph"});  // (4 - 6 % 4) % 4 = 2
  b.node("Mod", "w_mod", {"w", "ws"}, {"w_mod"});
  b.node("Sub", "w_rest", {"ws", "w_mod"}, {"w_rest"});
  b.node("Mod", "pw0", {"w_rest", "ws"}, {"pw0"});  // (4 - 5 % 4) % 4 = 3
  b.node("Mod", "m", {"minus7", "ws"}, {"m"});      // -7 mod 4 = 1 (fmod = 0)
  OnnxBuilder::attr(b.node("Mod", "f", {"minus7", "ws"}, {"f"}), "fmod", int64_t{1});  // fmod(-7, 4) = -3
  b.node("Add", "pw", {"pw0", "m"}, {"pw"});        // 3 + 1 = 4 at the right
  b.node("Add", "top", {"f", "ws"}, {"top"});       // -3 + 4 = 1 at the top
  // [n, c, top, left, n, c, bottom, right] = [0, 0, 1, 0, 0, 0, 2, 4]
  OnnxBuilder::attr(b.node("Concat", "pads", {"zeros", "top", "zero", "zeros", "ph", "pw"}, {"pads"}), "axis", int64_t{0});
  OnnxBuilder::attr(b.node("Pad", "pad", {"x", "pads"}, {"y"}), "mode", std::string("reflect"));
  const auto model = Model::from_bytes(convert_onnx(b.bytes(), "p.onnx").egan);
  ASSERT_EQ(model->ops().size(), 1u);
  Session s(model, {.batch = 2});
  const auto x = random_floats(rng, 2 * h * w * c);
  const auto y = s.run({Tensor{"x", DType::kFloat32, Layout::kNHWC, {2, h, w, c}, x, {}}})[0];
  EXPECT_EQ(y.shape, (std::vector<int64_t>{2, h + 3, w + 4, c}));
  cpu::PadShape shape;
  shape.batch = 2;
  shape.channels = c;
  shape.h = {h, 1, 2};
  shape.w = {w, 0, 4};
  shape.mode = cpu::PadMode::kReflect;
  std::vector<float> ref(static_cast<size_t>(2 * shape.h.out() * shape.w.out() * c));
  cpu::pad_reference(shape, x.data(), ref.data());
  EXPECT_EQ(max_abs_diff(y.f32, ref), 0.f);
}

TEST(ConverterPad, RefusalsNameTheNodeAndAttribute) {
  const std::vector<ErrorCase> cases = {
      {"unknown mode", [](OnnxBuilder& b) {
         b.input("x", {-1, 2, 3, 3}).output("y").ints("pads", {8}, {0, 0, 1, 1, 0, 0, 1, 1});
         OnnxBuilder::attr(b.node("Pad", "p1", {"x", "pads"}, {"y"}), "mode", std::string("symmetric"));
       }, {"p1", "Pad", "'mode'", "symmetric"}},
      {"channel pads", [](OnnxBuilder& b) {
         b.input("x", {-1, 2, 3, 3}).output("y").ints("pads", {8}, {0, 1, 0, 0, 0, 0, 0, 0});
         b.node("Pad", "p2", {"x", "pads"}, {"y"});
       }, {"p2", "'pads'", "channels"}},
      {"batch pads", [](OnnxBuilder& b) {
         b.input("x", {-1, 2, 3, 3}).output("y").ints("pads", {8}, {0, 0, 0, 0, 1, 0, 0, 0});
         b.node("Pad", "p3", {"x", "pads"}, {"y"});
       }, {"p3", "'pads'", "batch"}},
      {"NCL channel pads", [](OnnxBuilder& b) {
         b.input("x", {-1, 2, 5}).output("y").ints("pads", {6}, {0, 1, 0, 0, 0, 0});
         b.node("Pad", "p9", {"x", "pads"}, {"y"});
       }, {"p9", "'pads'", "only L (axis 2)"}},
      {"rank 2", [](OnnxBuilder& b) {
         b.input("x", {-1, 4}).output("y").ints("pads", {4}, {0, 1, 0, 1});
         b.node("Pad", "p4", {"x", "pads"}, {"y"});
       }, {"p4", "rank 2"}},
      {"cropped away", [](OnnxBuilder& b) {
         b.input("x", {-1, 2, 3, 3}).output("y").ints("pads", {8}, {0, 0, -2, 0, 0, 0, -1, 0});
         b.node("Pad", "p5", {"x", "pads"}, {"y"});
       }, {"p5", "'pads'", "crops all"}},
      {"wrong pads length", [](OnnxBuilder& b) {
         b.input("x", {-1, 2, 3, 3}).output("y").ints("pads", {4}, {1, 1, 1, 1});
         b.node("Pad", "p6", {"x", "pads"}, {"y"});
       }, {"p6", "'pads'", "expected 8"}},
      {"run-time pads", [](OnnxBuilder& b) {
         b.input("x", {-1, 2, 3, 3}).input("q", {-1}, onnx::TensorProto::INT64).output("y");
         b.node("Pad", "p7", {"x", "q"}, {"y"});
       }, {"p7", "'pads'", "constant"}},
      {"unknown attribute", [](OnnxBuilder& b) {
         b.input("x", {-1, 2, 3, 3}).output("y").ints("pads", {8}, {0, 0, 1, 1, 0, 0, 1, 1});
         OnnxBuilder::attr(b.node("Pad", "p8", {"x", "pads"}, {"y"}), "fancy", int64_t{1});
       }, {"p8", "'fancy'"}},
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

}  // namespace
}  // namespace edgegan
