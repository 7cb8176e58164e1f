// A hostile fused input map on a Conv2D (made, not damaged: its checksums are right) is
// refused by the op's validation with a message naming the defect.
#include <gtest/gtest.h>

#include <functional>

#include "edgegan/edgegan.h"
#include "egan_generated.h"
#include "tests/engine/hostile_model.h"
#include "tests/test_models/test_models.h"

namespace edgegan {
namespace {

// The nearest-upsample golden (its convolutions read a 2x nearest upsampling, then a
// reflect pad, through a fused input map) with the last such Conv2D changed by `mutate`.
std::vector<uint8_t> with_mapped_conv(const std::function<void(schema::Conv2DT&)>& mutate) {
  return testing::repacked_model(testing::test_model_bytes("golden/resize_nearest_upsample_conv"), [&](schema::ModelT& m) {
    schema::Conv2DT* conv = nullptr;
    for (auto& op : m.ops)
      if (auto* c = op->kind.AsConv2D(); c && c->input_upsample_h == 2) conv = c;
    if (!conv) throw std::runtime_error("no Conv2D with a fused input map");
    mutate(*conv);
  });
}

using testing::load_error;

TEST(ConvInputMapLoader, RejectsHostileMaps) {
  struct Case {
    const char* name;
    std::function<void(schema::Conv2DT&)> mutate;
    const char* expected;
  };
  const std::vector<Case> cases = {
      {"untouched", [](schema::Conv2DT&) {}, ""},
      {"zero factor", [](schema::Conv2DT& c) { c.input_upsample_h = 0; }, "input_upsample_h"},
      {"huge factor", [](schema::Conv2DT& c) { c.input_upsample_w = 1000; }, "input_upsample_w"},
      {"negative pad", [](schema::Conv2DT& c) { c.input_pad_mode = schema::PadMode_Reflect, c.input_pad_top = -1; }, "input_pad"},
      {"constant mode with pads", [](schema::Conv2DT& c) { c.input_pad_mode = schema::PadMode_Constant; }, "input_pad_mode Constant"},
      {"unknown mode", [](schema::Conv2DT& c) { c.input_pad_mode = static_cast<schema::PadMode>(9), c.input_pad_left = 1; }, "input_pad_mode 9"},
      {"output of another size", [](schema::Conv2DT& c) { c.input_pad_mode = schema::PadMode_Edge, c.input_pad_bottom = 2; }, "output"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string error = load_error(with_mapped_conv(c.mutate));
    if (std::string(c.expected).empty()) {
      EXPECT_EQ(error, "");
    } else {
      EXPECT_NE(error.find(c.expected), std::string::npos) << "got: '" << error << "'";
      EXPECT_NE(error.find("Conv2D"), std::string::npos) << error;
    }
  }
}

}  // namespace
}  // namespace edgegan
