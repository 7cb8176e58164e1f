// MatMul from an ONNX MatMul of two run-time tensors of rank 3 ([N, M, K] · [N, K, P],
// row-major) or 4 ([N, H, M, K] · [N, H or 1, K, P], stored NHWC and read through
// strides) or 5 ([N, G, H, M, K] · [N, G, H, K, P], row-major: window attention with its
// windows unfolded from the batch; G and H broadcast together): self-attention's q·kᵀ and
// attn·v. Other ranks are refused by name.
#include "converter/ops/matmul.h"

#include <algorithm>

#include "converter/egan_writer.h"
#include "converter/errors.h"
#include "converter/ops/op_lowering.h"

namespace edgegan::converter {
namespace {

class MatMulLowering final : public OpLowering {
 public:
  std::vector<std::string> onnx_ops() const override { return {}; }  // ONNX MatMul: dense.cpp
  void infer(RuntimeNode& rn) const override { infer_matmul(rn); }
  void lower(const Node& n, Lowering& l) const override { lower_matmul(n, l); }
  flatbuffers::Offset<schema::Op> write(const IrModel&, const IrOp& op, EganWriter& w) const override {
    const int b = op.inputs.size() > 1 ? op.inputs[1] : op.inputs[0];
    const auto body = schema::CreateMatMul(w.fbb(), op.inputs[0], b, op.output);
    return w.op(op, schema::OpKind_MatMul, body.Union());
  }
};

}  // namespace

void infer_matmul(RuntimeNode& rn) {
  const Node& n = rn.node;
  check_attributes(n, {});
  const Value &a = rn.runtime_input(0), &b = rn.runtime_input(1);
  if (a.is_int || b.is_int) throw ConvertError(where(n) + ": integer operands are not supported");
  const size_t rank = a.shape.size();
  if (b.shape.size() != rank) throw ConvertError(where(n) + ": run-time operands of different ranks are not supported");
  if (rank != 3 && rank != 4 && rank != 5)
    throw ConvertError(where(n) + ": a product of two run-time tensors of rank " + std::to_string(rank) + " is not supported (3 to 5)");
  if (a.shape[rank - 1] != b.shape[rank - 2])
    throw ConvertError(where(n) + ": inner dimensions differ (" + std::to_string(a.shape[rank - 1]) + " vs " + std::to_string(b.shape[rank - 2]) + ")");
  std::vector<int64_t> y = a.shape;
  y[rank - 1] = b.shape[rank - 1];
  if (rank == 4) {
    if (a.shape[1] != b.shape[1] && a.shape[1] != 1 && b.shape[1] != 1) throw ConvertError(where(n) + ": batch dimensions do not broadcast");
    y[1] = std::max(a.shape[1], b.shape[1]);
  }
  if (rank == 5) {
    const bool same = a.shape[1] == b.shape[1] && a.shape[2] == b.shape[2];
    const bool a_one = a.shape[1] == 1 && a.shape[2] == 1, b_one = b.shape[1] == 1 && b.shape[2] == 1;
    if (!same && !a_one && !b_one) throw ConvertError(where(n) + ": batch dimensions 1 and 2 do not broadcast together");
    y[1] = std::max(a.shape[1], b.shape[1]);
    y[2] = std::max(a.shape[2], b.shape[2]);
  }
  rn.set_output(y);
}

void lower_matmul(const Node& n, Lowering& l) {
  const int a = l.tensor(n, 0), b = l.tensor(n, 1);
  if (l.value(n.inputs[0]).shape.size() == 3 && (l.is_nhwc(a) || l.is_nhwc(b)))
    throw ConvertError(where(n) + ": a product of rank-3 maps stored as images (a convolution's output) is not supported; reshape to rank 3 first");
  if (a == b) l.add_op(schema::OpKind_MatMul, n, {a});
  else l.add_op(schema::OpKind_MatMul, n, {a, b});
}

template <>
const OpLowering& op_lowering<schema::OpKind_MatMul>() {
  static const MatMulLowering lowering;
  return lowering;
}

}  // namespace edgegan::converter
