// A hostile fused input map on a Conv2D (made, not damaged: its checksums are right) is
// refused by the op's validation with a message naming the defect.
#include <gtest/gtest.h>

#include <functional>

#include "edgegan/edgegan.h"
#include "egan_generated.h"
#include "engine/model_integrity.h"
#include "tests/test_models/test_models.h"

namespace edgegan {
namespace {

// The nearest-upsample golden (its convolution reads a 2x nearest upsampling through a
// map) unpacked, that Conv2D changed, packed again with its data section and new checksums.
std::vector<uint8_t> with_mapped_conv(const std::function<void(schema::Conv2DT&)>& mutate) {
  static const std::vector<uint8_t> full = testing::test_model_bytes(std::string("golden/") + "resize_nearest_upsample_conv");
  const uint32_t fb_size = flatbuffers::ReadScalar<uint32_t>(full.data());
  const size_t data_begin = (4 + fb_size + 63) / 64 * 64;
  std::unique_ptr<schema::ModelT> m(schema::GetSizePrefixedModel(full.data())->UnPack());
  schema::Conv2DT* conv = nullptr;
  for (auto& op : m->ops)
    if (auto* c = op->kind.AsConv2D(); c && c->input_upsample_h == 2) conv = c;
  if (!conv) throw std::runtime_error("no Conv2D with a fused input map");
  mutate(*conv);
  flatbuffers::FlatBufferBuilder b;
  schema::FinishSizePrefixedModelBuffer(b, schema::Model::Pack(b, m.get()));
  std::vector<uint8_t> out(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  out.resize((out.size() + 63) / 64 * 64, 0);
  out.insert(out.end(), full.begin() + static_cast<long>(data_begin), full.end() - kTrailerSize);
  seal_model_file(out);
  return out;
}

std::string load_error(const std::vector<uint8_t>& bytes) {
  try {
    Model::from_bytes(bytes);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

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
