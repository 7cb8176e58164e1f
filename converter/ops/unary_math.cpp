// UnaryMath from ONNX Sqrt, Exp, Log, Erf, Abs, Neg and Pow with a constant scalar
// exponent, on run-time tensors (constant ones are folded). The output keeps the
// input's layout. A Sqrt whose only reader divides by it becomes Rsqrt and the Div a
// Mul (binary.cpp): pixel norm's x / sqrt(mean(x²) + eps).
#include <cmath>

#include "converter/egan_writer.h"
#include "converter/errors.h"
#include "converter/lowering.h"
#include "converter/ops/op_lowering.h"

namespace edgegan::converter {
namespace {

schema::UnaryMathOperation operation_of(const Node& n) {
  if (n.op == "Sqrt") return schema::UnaryMathOperation_Sqrt;
  if (n.op == "Exp") return schema::UnaryMathOperation_Exp;
  if (n.op == "Log") return schema::UnaryMathOperation_Log;
  if (n.op == "Erf") return schema::UnaryMathOperation_Erf;
  if (n.op == "Abs") return schema::UnaryMathOperation_Abs;
  if (n.op == "Neg") return schema::UnaryMathOperation_Neg;
  return schema::UnaryMathOperation_Pow;
}

class UnaryMathLowering final : public OpLowering {
 public:
  std::vector<std::string> onnx_ops() const override { return {"Sqrt", "Exp", "Log", "Erf", "Abs", "Neg", "Pow"}; }

  void infer(RuntimeNode& rn) const override {
    const Node& n = rn.node;
    check_attributes(n, {});
    const Value& x = rn.runtime_input(0);
    if (x.is_int) throw ConvertError(where(n) + ": integer input is not supported");
    if (n.op == "Pow") {
      if (!rn.has_input(1) || !rn.input(1).is_const) throw ConvertError(where(n) + ": the exponent must be a constant");
      const ConstTensor& e = rn.constant(1, "exponent");
      if (e.numel() != 1) throw ConvertError(where(n) + ": the exponent must be a scalar (" + std::to_string(e.numel()) + " values given)");
      if (!std::isfinite(e.at(0))) throw ConvertError(where(n) + ": the exponent is not finite");
    }
    rn.set_output(x.shape);
  }

  void lower(const Node& n, Lowering& l) const override {
    IrOp& o = l.add_op(schema::OpKind_UnaryMath, n, {l.tensor(n, 0)});
    o.unary_operation = operation_of(n);
    if (n.op == "Pow") o.exponent = static_cast<float>(l.constant(n, 1).at(0));
  }

  flatbuffers::Offset<schema::Op> write(const IrModel&, const IrOp& op, EganWriter& w) const override {
    const auto body = schema::CreateUnaryMath(w.fbb(), op.inputs[0], op.output, static_cast<schema::UnaryMathOperation>(op.unary_operation), op.exponent);
    return w.op(op, schema::OpKind_UnaryMath, body.Union());
  }
};

}  // namespace

template <>
const OpLowering& op_lowering<schema::OpKind_UnaryMath>() {
  static const UnaryMathLowering lowering;
  return lowering;
}

}  // namespace edgegan::converter
