// Softmax from ONNX Softmax along one axis of a run-time tensor (not the batch). Before
// opset 13 ONNX normalises over every axis from `axis` on: taken when that is the last.
#include "converter/egan_writer.h"
#include "converter/errors.h"
#include "converter/lowering.h"
#include "converter/ops/op_lowering.h"

namespace edgegan::converter {
namespace {

int64_t softmax_axis(const Node& n, size_t rank, int64_t opset) {
  int64_t axis = attr_int(n, "axis", opset >= 13 ? -1 : 1);
  if (axis < -static_cast<int64_t>(rank) || axis >= static_cast<int64_t>(rank)) throw ConvertError(where(n) + ": attribute 'axis' is out of range");
  if (axis < 0) axis += static_cast<int64_t>(rank);
  if (axis == 0) throw ConvertError(where(n) + ": a softmax over the batch (axis 0) is not supported");
  if (opset < 13 && axis != static_cast<int64_t>(rank) - 1)
    throw ConvertError(where(n) + ": attribute 'axis' = " + std::to_string(axis) + " before opset 13 (over several axes) is not supported");
  return axis;
}

class SoftmaxLowering final : public OpLowering {
 public:
  std::vector<std::string> onnx_ops() const override { return {"Softmax"}; }

  void infer(RuntimeNode& rn) const override {
    const Node& n = rn.node;
    check_attributes(n, {"axis"});
    const Value& x = rn.runtime_input(0);
    if (x.is_int) throw ConvertError(where(n) + ": integer input is not supported");
    rn.set_output(x.shape);
  }

  void lower(const Node& n, Lowering& l) const override {
    const int x = l.tensor(n, 0);
    const size_t rank = l.value(n.inputs[0]).shape.size();
    const int64_t axis = softmax_axis(n, rank, l.opset());
    IrOp& o = l.add_op(schema::OpKind_Softmax, n, {x});
    o.axis = l.storage_axis(x, rank, axis);
  }

  flatbuffers::Offset<schema::Op> write(const IrModel&, const IrOp& op, EganWriter& w) const override {
    const auto body = schema::CreateSoftmax(w.fbb(), op.inputs[0], op.output, op.axis);
    return w.op(op, schema::OpKind_Softmax, body.Union());
  }
};

}  // namespace

template <>
const OpLowering& op_lowering<schema::OpKind_Softmax>() {
  static const SoftmaxLowering lowering;
  return lowering;
}

}  // namespace edgegan::converter
