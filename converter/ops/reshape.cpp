// Reshape from ONNX Reshape, Flatten (axis 1), Unsqueeze and Squeeze of a run-time
// tensor; one that changes nothing is an alias, not an op.
#include "converter/egan_writer.h"
#include "converter/errors.h"
#include "converter/lowering.h"
#include "converter/ops/op_lowering.h"

namespace edgegan::converter {
namespace {

class ReshapeLowering final : public OpLowering {
 public:
  std::vector<std::string> onnx_ops() const override { return {"Reshape", "Flatten", "Unsqueeze", "Squeeze"}; }

  void infer(RuntimeNode& rn) const override {
    const Node& n = rn.node;
    const Value& x = rn.runtime_input(0);
    if (n.op == "Reshape") {
      check_attributes(n, {"allowzero"});
      std::vector<int64_t> target = as_ints(rn.input(1), n, "shape");
      // Exported at a fixed batch, torch writes x.size(0) as that number: a target that
      // starts with it, over a tensor whose dim 0 is the batch, keeps the batch.
      if (rn.export_batch() > 0 && !target.empty() && target[0] == rn.export_batch() && !x.shape.empty() && x.shape[0] == rn.batch()) target[0] = rn.batch();
      rn.set_output(reshape_target(n, x.shape, std::move(target)));
    } else if (n.op == "Flatten") {
      check_attributes(n, {"axis"});
      int64_t axis = attr_int(n, "axis", 1);
      if (axis < 0) axis += static_cast<int64_t>(x.shape.size());
      if (axis != 1) throw ConvertError(where(n) + ": attribute 'axis' = " + std::to_string(axis) + " is not supported (only 1: keep the batch)");
      rn.set_output({rn.batch(), product(x.shape, 1)});
    } else if (n.op == "Unsqueeze") {
      rn.set_output(unsqueeze_shape(n, x.shape, axes_of(n, rn.values())));
    } else {
      rn.set_output(squeeze_shape(n, x.shape, axes_of(n, rn.values())));
    }
  }

  void lower(const Node& n, Lowering& l) const override {
    // A no-op reshape: the input's tensor has the output's shape already (the same
    // shape, or a value a fusion computed in its original shape: GroupNorm).
    if (l.tensor_holds(l.tensor(n, 0), n.outputs[0])) return l.alias_output(n);
    l.add_op(schema::OpKind_Reshape, n, {l.tensor(n, 0)});
  }

  flatbuffers::Offset<schema::Op> write(const IrModel&, const IrOp& op, EganWriter& w) const override {
    const auto body = schema::CreateReshape(w.fbb(), op.inputs[0], op.output);
    return w.op(op, schema::OpKind_Reshape, body.Union());
  }
};

}  // namespace

template <>
const OpLowering& op_lowering<schema::OpKind_Reshape>() {
  static const ReshapeLowering lowering;
  return lowering;
}

}  // namespace edgegan::converter
