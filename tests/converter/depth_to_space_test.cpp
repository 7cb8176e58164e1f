// DepthToSpace in the converter: ONNX DepthToSpace/SpaceToDepth and the pixel
// (un)shuffle chains Reshape -> Transpose -> Reshape, against the kernels' reference.
#include <gtest/gtest.h>

#include <functional>

#include "converter/converter.h"
#include "edgegan/edgegan.h"
#include "kernels_cpu/depth_to_space/depth_to_space.h"
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

// Converts, runs one sample of x (NCHW dims c, h, w; NHWC data) and compares with the reference.
void check(OnnxBuilder& b, int c, int h, int w, const cpu::DepthToSpaceShape& shape, bool to_space, const char* name) {
  const auto model = Model::from_bytes(convert_onnx(b.bytes(), "d.onnx").egan);
  ASSERT_EQ(model->ops().size(), 1u);
  EXPECT_EQ(model->ops()[0].kind, "DepthToSpace");
  EXPECT_EQ(model->ops()[0].name, name);
  std::mt19937 rng(7);
  const auto x = random_floats(rng, static_cast<size_t>(c * h * w));
  Session s(model, {.batch = 1});
  const auto y = s.run({Tensor{"x", DType::kFloat32, Layout::kNHWC, {1, h, w, c}, x, {}}})[0];
  std::vector<float> ref(x.size());
  cpu::depth_to_space_reference(shape, to_space, x.data(), ref.data());
  EXPECT_EQ(max_abs_diff(y.f32, ref), 0.f);
}

TEST(ConverterDepthToSpace, OnnxOpsInBothModes) {
  for (const char* mode : {"DCR", "CRD"}) {
    SCOPED_TRACE(mode);
    OnnxBuilder b;
    b.input("x", {-1, 12, 2, 3}).output("y");
    auto& n = b.node("DepthToSpace", "d2s", {"x"}, {"y"});
    OnnxBuilder::attr(n, "blocksize", int64_t{2});
    OnnxBuilder::attr(n, "mode", std::string(mode));
    check(b, 12, 2, 3, {1, 2, 3, 3, 2, std::string(mode) == "DCR" ? cpu::DepthToSpaceMode::kDCR : cpu::DepthToSpaceMode::kCRD}, true, "d2s");
  }
  OnnxBuilder b;
  b.input("x", {-1, 2, 4, 6}).output("y");
  OnnxBuilder::attr(b.node("SpaceToDepth", "s2d", {"x"}, {"y"}), "blocksize", int64_t{2});
  check(b, 2, 4, 6, {1, 2, 3, 2, 2, cpu::DepthToSpaceMode::kDCR}, false, "s2d");
}

// x [N, 8, 4, 6] (space side) or [N, 12, 2, 3] (depth side) through a 6-D reshape.
TEST(ConverterDepthToSpace, RecognisesReshapeTransposeReshapeChains) {
  struct Chain {
    const char* what;
    std::vector<int64_t> x, r6, perm, y;
    bool to_space;
    cpu::DepthToSpaceMode mode;
  };
  const std::vector<Chain> chains = {
      {"pixel unshuffle", {8, 4, 6}, {-1, 8, 2, 2, 3, 2}, {0, 1, 3, 5, 2, 4}, {-1, 32, 2, 3}, false, cpu::DepthToSpaceMode::kCRD},
      {"space to depth", {8, 4, 6}, {-1, 8, 2, 2, 3, 2}, {0, 3, 5, 1, 2, 4}, {-1, 32, 2, 3}, false, cpu::DepthToSpaceMode::kDCR},
      {"pixel shuffle", {12, 2, 3}, {-1, 3, 2, 2, 2, 3}, {0, 1, 4, 2, 5, 3}, {-1, 3, 4, 6}, true, cpu::DepthToSpaceMode::kCRD},
      {"depth to space", {12, 2, 3}, {-1, 2, 2, 3, 2, 3}, {0, 3, 4, 1, 5, 2}, {-1, 3, 4, 6}, true, cpu::DepthToSpaceMode::kDCR},
  };
  for (const Chain& ch : chains) {
    SCOPED_TRACE(ch.what);
    OnnxBuilder b;
    b.input("x", {-1, ch.x[0], ch.x[1], ch.x[2]}).output("y").ints("s6", {6}, ch.r6).ints("s4", {4}, ch.y);
    b.node("Reshape", "r1", {"x", "s6"}, {"t1"});
    OnnxBuilder::attr(b.node("Transpose", "tp", {"t1"}, {"t2"}), "perm", ch.perm);
    b.node("Reshape", "r2", {"t2", "s4"}, {"y"});
    cpu::DepthToSpaceShape shape{1, ch.to_space ? ch.x[1] : ch.y[2], ch.to_space ? ch.x[2] : ch.y[3], 2, 2, ch.mode};
    shape.channels = ch.to_space ? ch.y[1] : ch.x[0];
    check(b, static_cast<int>(ch.x[0]), static_cast<int>(ch.x[1]), static_cast<int>(ch.x[2]), shape, ch.to_space, "r1+tp+r2");
  }
}

TEST(ConverterDepthToSpace, RefusalsNameTheNodeAndAttribute) {
  struct ErrorCase {
    const char* name;
    std::function<void(OnnxBuilder&)> build;
    std::vector<std::string> expected;
  };
  const std::vector<ErrorCase> cases = {
      {"unknown mode", [](OnnxBuilder& b) {
         b.input("x", {-1, 8, 2, 2}).output("y");
         auto& n = b.node("DepthToSpace", "d1", {"x"}, {"y"});
         OnnxBuilder::attr(n, "blocksize", int64_t{2});
         OnnxBuilder::attr(n, "mode", std::string("RCD"));
       }, {"d1", "'mode'", "RCD"}},
      {"channels not divisible", [](OnnxBuilder& b) {
         b.input("x", {-1, 6, 2, 2}).output("y");
         OnnxBuilder::attr(b.node("DepthToSpace", "d2", {"x"}, {"y"}), "blocksize", int64_t{2});
       }, {"d2", "'blocksize'"}},
      {"missing blocksize", [](OnnxBuilder& b) {
         b.input("x", {-1, 8, 2, 2}).output("y");
         b.node("DepthToSpace", "d3", {"x"}, {"y"});
       }, {"d3", "'blocksize' = 0"}},
      {"map not divisible", [](OnnxBuilder& b) {
         b.input("x", {-1, 2, 3, 4}).output("y");
         OnnxBuilder::attr(b.node("SpaceToDepth", "s1", {"x"}, {"y"}), "blocksize", int64_t{2});
       }, {"s1", "'blocksize'"}},
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
