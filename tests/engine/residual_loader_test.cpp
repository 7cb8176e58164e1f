// A fused residual (Conv2D's and GroupNorm's `residual`) in a hostile file (made, not
// damaged: its checksums are right) is refused by the op's validation with a message
// naming the defect; a valid one is an input of its op everywhere (inspect, planner).
#include <gtest/gtest.h>

#include <functional>

#include "edgegan/edgegan.h"
#include "egan_generated.h"
#include "tests/engine/hostile_model.h"
#include "tests/test_models/test_models.h"

namespace edgegan {
namespace {

// A golden model with its first op of kind `kind` that has a residual changed by `mutate`.
std::vector<uint8_t> with_residual_op(const std::string& golden, schema::OpKind kind,
                                      const std::function<void(schema::ModelT&, schema::OpT&)>& mutate) {
  return testing::repacked_model(testing::test_model_bytes("golden/" + golden), [&](schema::ModelT& m) {
    schema::OpT* found = nullptr;
    for (auto& op : m.ops) {
      if (op->kind.type != kind) continue;
      const int residual = kind == schema::OpKind_Conv2D ? op->kind.AsConv2D()->residual : op->kind.AsGroupNorm()->residual;
      if (residual >= 0) {
        found = op.get();
        break;
      }
    }
    if (!found) throw std::runtime_error(golden + ": no op with a residual (the converter did not fuse one)");
    mutate(m, *found);
  });
}

using testing::load_error;

int& residual_of(schema::OpT& op) {
  return op.kind.type == schema::OpKind_Conv2D ? op.kind.AsConv2D()->residual : op.kind.AsGroupNorm()->residual;
}
int output_of(const schema::OpT& op) {
  return op.kind.type == schema::OpKind_Conv2D ? op.kind.AsConv2D()->output : op.kind.AsGroupNorm()->output;
}
void set_activation(schema::OpT& op, schema::Activation a) {
  if (op.kind.type == schema::OpKind_GroupNorm) {
    op.kind.AsGroupNorm()->activation = a;
    return;
  }
  auto* c = op.kind.AsConv2D();
  if (!c->epilogue) c->epilogue = std::make_unique<schema::EpilogueT>();
  c->epilogue->activation = a;
}

TEST(ResidualLoader, RejectsHostileResiduals) {
  struct Case {
    const char* name;
    std::function<void(schema::ModelT&, schema::OpT&)> mutate;
    const char* expected;
  };
  const std::vector<Case> cases = {
      {"untouched", [](schema::ModelT&, schema::OpT&) {}, ""},
      {"none", [](schema::ModelT&, schema::OpT& op) { residual_of(op) = -1; }, ""},
      {"index out of range", [](schema::ModelT& m, schema::OpT& op) { residual_of(op) = static_cast<int>(m.tensors.size()); }, "out of range"},
      {"index below -1", [](schema::ModelT&, schema::OpT& op) { residual_of(op) = -2; }, "out of range"},
      {"its own output", [](schema::ModelT&, schema::OpT& op) { residual_of(op) = output_of(op); }, "used before it is produced"},
      {"produced later", [](schema::ModelT& m, schema::OpT& op) { residual_of(op) = m.outputs.front()->tensor; }, "used before it is produced"},
      {"another shape", [](schema::ModelT& m, schema::OpT& op) { residual_of(op) = m.inputs.front()->tensor; }, "does not have the output's shape"},
      {"with an activation", [](schema::ModelT&, schema::OpT& op) { set_activation(op, schema::Activation_Relu); }, "needs activation None"},
  };
  // SRGAN's residual blocks: Conv2D; CycleGAN's: InstanceNorm (GroupNorm).
  for (const auto& [golden, kind, kind_name] : {std::tuple{"zoo_srgan", schema::OpKind_Conv2D, "Conv2D"},
                                                std::tuple{"zoo_cyclegan_resnet", schema::OpKind_GroupNorm, "GroupNorm"}}) {
    for (const auto& c : cases) {
      SCOPED_TRACE(std::string(golden) + ": " + c.name);
      const std::string error = load_error(with_residual_op(golden, kind, c.mutate));
      if (std::string(c.expected).empty()) {
        EXPECT_EQ(error, "");
      } else {
        EXPECT_NE(error.find(c.expected), std::string::npos) << "got: '" << error << "'";
        EXPECT_NE(error.find(kind_name), std::string::npos) << error;
      }
    }
  }
}

// inspect lists the residual among the op's inputs and in its attributes.
TEST(ResidualLoader, InspectShowsTheFusedResidual) {
  for (const char* golden : {"zoo_srgan", "zoo_cyclegan_resnet", "zoo_esrgan_rrdb"}) {
    SCOPED_TRACE(golden);
    const auto model = testing::test_model(std::string("golden/") + golden);
    int fused = 0;
    for (const OpInfo& op : model->ops()) {
      if (op.attributes.find("+ residual t") == std::string::npos) continue;
      ++fused;
      ASSERT_EQ(op.inputs.size(), 2u) << op.name;
      EXPECT_NE(op.attributes.find("'" + op.inputs[1] + "'"), std::string::npos) << op.attributes;
      EXPECT_EQ(op.input_dims[1], op.output_dims[0]) << op.name;
    }
    EXPECT_GT(fused, 0);
  }
}

}  // namespace
}  // namespace edgegan
