// Reduce from ONNX ReduceSum, ReduceMean, ReduceMax and ReduceL2 on run-time tensors,
// axes as an attribute or (opset 13+ ReduceSum, 18+ the others) a constant input. The
// batch is never reduced. keepdims = 0 is the keepdims result and a Reshape (free when
// the storage order allows, a re-ordering copy otherwise).
#include <algorithm>

#include "converter/egan_writer.h"
#include "converter/errors.h"
#include "converter/lowering.h"
#include "converter/ops/op_lowering.h"

namespace edgegan::converter {
namespace {

schema::ReduceOperation operation_of(const Node& n) {
  if (n.op == "ReduceSum") return schema::ReduceOperation_Sum;
  if (n.op == "ReduceMean") return schema::ReduceOperation_Mean;
  if (n.op == "ReduceMax") return schema::ReduceOperation_Max;
  return schema::ReduceOperation_L2;
}

// The ONNX axes, non-negative and sorted; the node's errors name what is refused.
std::vector<int64_t> reduced_axes(const Node& n, const std::map<std::string, Value>& values, size_t rank) {
  std::vector<int64_t> axes = axes_of(n, values);
  if (axes.empty()) {
    if (attr_int(n, "noop_with_empty_axes", 0) != 0) throw ConvertError(where(n) + ": attribute 'noop_with_empty_axes' = 1 with no axes is not supported");
    throw ConvertError(where(n) + ": reducing over every axis (the batch included) is not supported");
  }
  for (int64_t& a : axes) {
    if (a < -static_cast<int64_t>(rank) || a >= static_cast<int64_t>(rank)) throw ConvertError(where(n) + ": axis " + std::to_string(a) + " is out of range");
    if (a < 0) a += static_cast<int64_t>(rank);
    if (a == 0) throw ConvertError(where(n) + ": reducing over the batch (axis 0) is not supported");
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) throw ConvertError(where(n) + ": an axis is repeated");
  return axes;
}

class ReduceLowering final : public OpLowering {
 public:
  std::vector<std::string> onnx_ops() const override { return {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceL2"}; }

  void infer(RuntimeNode& rn) const override {
    const Node& n = rn.node;
    check_attributes(n, {"axes", "keepdims", "noop_with_empty_axes"});
    const Value& x = rn.runtime_input(0);
    if (x.is_int) throw ConvertError(where(n) + ": integer input is not supported");
    if (x.shape.size() < 2 || x.shape.size() > 4) throw ConvertError(where(n) + ": rank " + std::to_string(x.shape.size()) + " is not supported (2 to 4)");
    const std::vector<int64_t> axes = reduced_axes(n, rn.values(), x.shape.size());
    const bool keep = attr_int(n, "keepdims", 1) != 0;
    std::vector<int64_t> out;
    for (size_t k = 0; k < x.shape.size(); ++k) {
      const bool reduced = std::find(axes.begin(), axes.end(), static_cast<int64_t>(k)) != axes.end();
      if (!reduced) out.push_back(x.shape[k]);
      else if (keep) out.push_back(1);
    }
    rn.set_output(out);
  }

  void lower(const Node& n, Lowering& l) const override {
    const int x = l.tensor(n, 0);
    const std::vector<int64_t>& shape = l.value(n.inputs[0]).shape;
    std::map<std::string, Value> values;
    if (l.has_input(n, 1)) values[n.inputs[1]] = l.value(n.inputs[1]);
    const std::vector<int64_t> axes = reduced_axes(n, values, shape.size());
    std::vector<int> storage;
    std::vector<int64_t> kept = shape;
    for (int64_t a : axes) storage.push_back(l.storage_axis(x, shape.size(), a)), kept[static_cast<size_t>(a)] = 1;
    std::sort(storage.begin(), storage.end());
    const bool keep = attr_int(n, "keepdims", 1) != 0;
    IrOp& o = keep ? l.add_op(schema::OpKind_Reduce, n, {x}) : l.add_op_with_new_tensor(schema::OpKind_Reduce, n, {x}, n.outputs[0] + "/keepdims", kept);
    o.reduce_operation = operation_of(n);
    o.axes = storage;
    if (!keep) {
      const int t = o.output;
      l.add_op(schema::OpKind_Reshape, n, {t});
    }
  }

  flatbuffers::Offset<schema::Op> write(const IrModel&, const IrOp& op, EganWriter& w) const override {
    const auto body = schema::CreateReduce(w.fbb(), op.inputs[0], op.output, static_cast<schema::ReduceOperation>(op.reduce_operation),
                                           w.fbb().CreateVector(op.axes));
    return w.op(op, schema::OpKind_Reduce, body.Union());
  }
};

}  // namespace

template <>
const OpLowering& op_lowering<schema::OpKind_Reduce>() {
  static const ReduceLowering lowering;
  return lowering;
}

}  // namespace edgegan::converter
