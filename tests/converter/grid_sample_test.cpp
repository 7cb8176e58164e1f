// GridSample in the converter: ONNX's grid becomes a Transpose into the op's grid map
// and the op; every refusal names the node and the attribute or input.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "converter/converter.h"
#include "edgegan/edgegan.h"
#include "tests/converter/convert_error.h"
#include "tests/converter/onnx_builder.h"

namespace edgegan {
namespace {

using testing::convert_error;
using testing::OnnxBuilder;

// X [N, 2, 5, 4] sampled at grid [N, 3, 6, 2] with the given attributes.
std::string model(const std::vector<std::pair<std::string, std::string>>& strings, int64_t align = 0, std::vector<int64_t> grid = {-1, 3, 6, 2},
                  std::vector<int64_t> x = {-1, 2, 5, 4}) {
  OnnxBuilder b;
  b.input("x", x).input("grid", grid).output("y");
  auto& n = b.node("GridSample", "gs", {"x", "grid"}, {"y"});
  for (const auto& [k, v] : strings) OnnxBuilder::attr(n, k, v);
  OnnxBuilder::attr(n, "align_corners", align);
  return b.bytes();
}

TEST(ConverterGridSample, OnnxGridIsTransposedIntoTheMap) {
  const auto m = Model::from_bytes(converter::convert_onnx(model({{"mode", "bicubic"}, {"padding_mode", "reflection"}}, 1), "g.onnx").egan);
  ASSERT_EQ(m->ops().size(), 2u);
  EXPECT_EQ(m->ops()[0].kind, "Transpose");
  EXPECT_EQ(m->ops()[1].kind, "GridSample");
  EXPECT_EQ(m->ops()[1].attributes, "Bicubic padding Reflection align_corners");
  EXPECT_EQ(m->outputs()[0].dims, (std::vector<int64_t>{-1, 3, 6, 2}));
}

TEST(ConverterGridSample, RefusalsNameTheAttributeOrInput) {
  const auto refused = [](const std::string& bytes, const std::string& what) {
    const std::string e = convert_error(bytes);
    EXPECT_NE(e.find("node 'gs' (GridSample)"), std::string::npos) << e;
    EXPECT_NE(e.find(what), std::string::npos) << e;
  };
  refused(model({{"mode", "area"}}), "attribute 'mode' = 'area'");
  refused(model({{"padding_mode", "wrap"}}), "attribute 'padding_mode' = 'wrap'");
  refused(model({}, 2), "attribute 'align_corners' = 2");
  refused(model({}, 0, {-1, 3, 6, 3}), "last dimension 3, not 2");
  refused(model({}, 0, {-1, 3, 6, 4, 3}, {-1, 2, 5, 4, 4}), "rank 5");
}

}  // namespace
}  // namespace edgegan
