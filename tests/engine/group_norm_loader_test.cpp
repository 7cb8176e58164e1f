// A hostile GroupNorm op (made, not damaged: its checksums are right) is refused by the
// op's validation with a message naming the defect.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "edgegan/edgegan.h"
#include "egan_generated.h"
#include "tests/engine/hostile_model.h"
#include "tests/test_models/test_models.h"

namespace edgegan {
namespace {

// The torch GroupNorm golden with one GroupNorm (8 channels, 2 groups) changed by `mutate`.
std::vector<uint8_t> with_group_norm(const std::function<void(schema::ModelT&, schema::GroupNormT&)>& mutate) {
  return testing::repacked_model(testing::test_model_bytes("golden/norm_group_norm_torch"), [&](schema::ModelT& m) {
    schema::GroupNormT* norm = nullptr;
    for (auto& op : m.ops)
      if (auto* g = op->kind.AsGroupNorm(); g && g->groups == 2) norm = g;
    if (!norm) throw std::runtime_error("no GroupNorm with 2 groups");
    mutate(m, *norm);
  });
}

using testing::load_error;

TEST(GroupNormLoader, RejectsHostileGroupNormOps) {
  struct Case {
    const char* name;
    std::function<void(schema::ModelT&, schema::GroupNormT&)> mutate;
    const char* expected;
  };
  const std::vector<Case> cases = {
      {"untouched", [](schema::ModelT&, schema::GroupNormT&) {}, ""},
      {"groups do not divide", [](schema::ModelT&, schema::GroupNormT& g) { g.groups = 3; }, "does not divide"},
      {"zero groups", [](schema::ModelT&, schema::GroupNormT& g) { g.groups = 0; }, "groups = 0"},
      {"more groups than channels", [](schema::ModelT&, schema::GroupNormT& g) { g.groups = 16; }, "groups = 16"},
      {"channels mismatch", [](schema::ModelT&, schema::GroupNormT& g) { g.channels = 4; }, "does not match input"},
      {"negative epsilon", [](schema::ModelT&, schema::GroupNormT& g) { g.epsilon = -1.f; }, "epsilon"},
      {"NaN epsilon", [](schema::ModelT&, schema::GroupNormT& g) { g.epsilon = NAN; }, "epsilon"},
      {"scale missing", [](schema::ModelT&, schema::GroupNormT& g) { g.scale = 0; }, "scale is missing"},
      {"shift of another size", [](schema::ModelT& m, schema::GroupNormT& g) {
         for (uint32_t k = 1; k < m.buffers.size(); ++k)
           if (m.buffers[k]->size != 32) g.shift = k;
       }, "shift buffer has"},
      {"scale index out of range", [](schema::ModelT&, schema::GroupNormT& g) { g.scale = 999; }, "out of range"},
      {"unknown activation", [](schema::ModelT&, schema::GroupNormT& g) { g.activation = static_cast<schema::Activation>(42); }, "activation"},
      {"PRelu outside an epilogue", [](schema::ModelT&, schema::GroupNormT& g) { g.activation = schema::Activation_PRelu; }, "outside a convolution's epilogue"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string error = load_error(with_group_norm(c.mutate));
    if (std::string(c.expected).empty()) {
      EXPECT_EQ(error, "");
    } else {
      EXPECT_NE(error.find(c.expected), std::string::npos) << "got: '" << error << "'";
      EXPECT_NE(error.find("GroupNorm"), std::string::npos) << error;
    }
  }
}

}  // namespace
}  // namespace edgegan
