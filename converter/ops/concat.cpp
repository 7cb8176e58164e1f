// Concat from ONNX Concat of run-time tensors, along any axis but the batch's
// (an NCHW or NCL axis of a map becomes the NHWC storage axis).
#include "converter/egan_writer.h"
#include "converter/errors.h"
#include "converter/lowering.h"
#include "converter/ops/op_lowering.h"

namespace edgegan::converter {
namespace {

class ConcatLowering final : public OpLowering {
 public:
  std::vector<std::string> onnx_ops() const override { return {"Concat"}; }

  void infer(RuntimeNode& rn) const override {
    const Node& n = rn.node;
    const Value& x = rn.runtime_input(0);
    check_attributes(n, {"axis"});
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    int64_t axis = attr_int(n, "axis", 0);
    if (axis < 0) axis += rank;
    if (axis < 1 || axis >= rank)
      throw ConvertError(where(n) + ": attribute 'axis' = " + std::to_string(axis) + " is not supported (the batch axis cannot be concatenated)");
    std::vector<int64_t> out = x.shape;
    out[static_cast<size_t>(axis)] = 0;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const Value& v = rn.input(k);
      if (v.is_const) throw ConvertError(where(n) + ": concatenating a constant with run-time tensors is not supported");
      if (v.is_int || v.shape.size() != x.shape.size()) throw ConvertError(where(n) + ": inputs differ in rank or type");
      for (int64_t d = 0; d < rank; ++d)
        if (d != axis && v.shape[static_cast<size_t>(d)] != x.shape[static_cast<size_t>(d)]) throw ConvertError(where(n) + ": input shapes do not match");
      out[static_cast<size_t>(axis)] += v.shape[static_cast<size_t>(axis)];
    }
    rn.set_output(out);
  }

  void lower(const Node& n, Lowering& l) const override {
    const Value& x = l.value(n.inputs[0]);
    // Rank 3: maps (NHWC) if any input is one, all of them then made NHWC; else row-major.
    bool maps = x.shape.size() == 4;
    for (size_t k = 0; k < n.inputs.size(); ++k) maps = maps || (x.shape.size() == 3 && l.is_nhwc(l.tensor(n, k)));
    std::vector<int> ins;
    for (size_t k = 0; k < n.inputs.size(); ++k) ins.push_back(maps ? l.spatial_tensor(n, k) : l.tensor(n, k));
    int64_t axis = attr_int(n, "axis", 0);
    if (axis < 0) axis += static_cast<int64_t>(x.shape.size());
    IrOp& o = l.add_op(schema::OpKind_Concat, n, ins);
    o.axis = maps ? spatial_storage_axis(x.shape.size(), axis) : static_cast<int>(axis);  // NCHW / NCL axis -> NHWC storage axis
  }

  flatbuffers::Offset<schema::Op> write(const IrModel&, const IrOp& op, EganWriter& w) const override {
    const auto ins = w.fbb().CreateVector(op.inputs);
    const auto body = schema::CreateConcat(w.fbb(), ins, op.output, op.axis);
    return w.op(op, schema::OpKind_Concat, body.Union());
  }
};

}  // namespace

template <>
const OpLowering& op_lowering<schema::OpKind_Concat>() {
  static const ConcatLowering lowering;
  return lowering;
}

}  // namespace edgegan::converter
