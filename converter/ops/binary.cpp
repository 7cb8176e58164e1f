// ONNX Add, Sub, Mul and Div with multidirectional broadcasting, and Reciprocal (1 / x). A constant scalar or
// per-channel (per-feature) operand makes an affine map, x*scale[c] + shift[c]: it folds
// into the op that produced x when that op's kind takes a scale and shift
// (OpLowering::epilogue_fusions), it has no other reader and no activation, else becomes
// a ChannelAffine op (c / x is not affine). An Add of two run-time tensors of one shape
// where one is the output of an op whose kind takes a residual (a Conv or an
// Instance/Group Norm) that only this Add reads, without activation, and the other
// exists before that op runs (a residual or skip connection) folds into that op as its
// residual (y = op(x) + other, in the op's epilogue).
// Everything else is a Binary op: two run-time tensors, or one and a constant of any
// broadcastable shape (a weight buffer in storage order, not trainable). x / sqrt(y),
// the Sqrt read only by the Div, is x * rsqrt(y) (pixel norm).
#include <algorithm>

#include "converter/egan_writer.h"
#include "converter/errors.h"
#include "converter/lowering.h"
#include "converter/ops/op_lowering.h"
#include "kernels_cpu/binary/binary.h"

namespace edgegan::converter {
namespace {

schema::BinaryOperation operation_of(const Node& n) {
  if (n.op == "Add") return schema::BinaryOperation_Add;
  if (n.op == "Sub") return schema::BinaryOperation_Sub;
  if (n.op == "Mul") return schema::BinaryOperation_Mul;
  return schema::BinaryOperation_Div;
}

// dims with leading 1s to `rank`.
std::vector<int64_t> padded(const std::vector<int64_t>& dims, size_t rank) {
  std::vector<int64_t> p(rank - std::min(rank, dims.size()), 1);
  p.insert(p.end(), dims.begin(), dims.end());
  return p;
}

// y = ta + tb (IR tensors, one layout) as a residual of the op that produced one
// operand: its kind must take a residual (OpLowering::epilogue_fusions), and it must be
// the operand's only reader with no activation yet (fusable_producer), the operands must have one shape (no broadcasting), and the other
// operand must be a graph input or the output of an op that runs before it (else the
// fused op would read it before it exists). Of two candidates the later op takes it
// (the other is then the earlier one's output or older). Returns whether it fused.
bool fuse_residual(const Node& n, Lowering& l, int ta, int tb) {
  const auto& tensors = l.model().tensors;
  const IrTensor &a = tensors[static_cast<size_t>(ta)], &b = tensors[static_cast<size_t>(tb)];
  if (ta == tb || a.is_int || b.is_int || a.nhwc != b.nhwc || a.dims != b.dims) return false;
  if (l.value(n.inputs[0]).shape != l.value(n.inputs[1]).shape) return false;
  IrOp* best = nullptr;
  int best_index = -1, other = -1;
  for (size_t side : {size_t{0}, size_t{1}}) {
    IrOp* p = l.fusable_producer(n, Fusion::kResidual, side);
    const int mine = side == 0 ? ta : tb, theirs = side == 0 ? tb : ta;
    if (!p || p->output != mine) continue;
    const int index = l.producer_index(mine);
    if (l.producer_index(theirs) >= index) continue;  // produced later: not there when the op runs
    if (index > best_index) best = p, best_index = index, other = theirs;
  }
  if (!best) return false;
  best->inputs.push_back(other);  // its residual: residual_of(*best)
  l.absorb(n, *best);
  l.model().residuals_fused++;
  return true;
}

class BinaryLowering final : public OpLowering {
 public:
  std::vector<std::string> onnx_ops() const override { return {"Add", "Sub", "Mul", "Div", "Reciprocal"}; }

  void infer(RuntimeNode& rn) const override {
    const Node& n = rn.node;
    check_attributes(n, {});  // opset < 7's 'broadcast' and 'axis' are refused by name
    if (n.op == "Reciprocal") {  // 1 / x, as torch exports c / x (then a Mul by c)
      const Value& x = rn.runtime_input(0);
      if (x.is_int) throw ConvertError(where(n) + ": integer operands are not supported");
      if (x.shape.size() > static_cast<size_t>(cpu::kBinaryMaxRank)) throw ConvertError(where(n) + ": rank " + std::to_string(x.shape.size()) + " is not supported");
      rn.set_output(x.shape);
      return;
    }
    if (n.inputs.size() != 2 || !rn.has_input(0) || !rn.has_input(1)) throw ConvertError(where(n) + ": needs exactly two inputs");
    const Value &a = rn.input(0), &b = rn.input(1);
    for (const Value* v : {&a, &b})
      if (v->is_const ? v->c.is_int : v->is_int) throw ConvertError(where(n) + ": integer operands are not supported");
    const Value& x = a.is_const ? b : a;  // a run-time operand (the node is not folded)
    const size_t rank = x.shape.size();
    if (rank > static_cast<size_t>(cpu::kBinaryMaxRank))
      throw ConvertError(where(n) + ": rank " + std::to_string(rank) + " operands are not supported (at most " +
                         std::to_string(cpu::kBinaryMaxRank) + ")");
    std::vector<int64_t> da, db;
    for (int k = 0; k < 2; ++k) {  // (by index: x * x reads one Value twice)
      const Value* v = k == 0 ? &a : &b;
      const std::vector<int64_t>& dims = v->is_const ? v->c.dims : v->shape;
      if (dims.size() > rank)
        throw ConvertError(where(n) + (v->is_const ? ": a constant operand of higher rank than the run-time one is not supported"
                                                   : ": run-time operands of different ranks are not supported"));
      if (!v->is_const && dims.size() != rank) throw ConvertError(where(n) + ": run-time operands of different ranks are not supported");
      (k == 0 ? da : db) = padded(dims, rank);
    }
    std::vector<int64_t> out(rank);
    for (size_t k = 0; k < rank; ++k) {
      if (da[k] != db[k] && da[k] != 1 && db[k] != 1)
        throw ConvertError(where(n) + ": operand shapes do not broadcast (dimension " + std::to_string(k) + ": " + std::to_string(da[k]) + " vs " +
                           std::to_string(db[k]) + ")");
      out[k] = std::max(da[k], db[k]);
    }
    const std::vector<int64_t>& dc = a.is_const ? da : db;
    if ((a.is_const || b.is_const) && rank > 0 && dc[0] != 1)
      throw ConvertError(where(n) + ": a constant operand with a batch dimension is not supported");
    rn.set_output(out);
  }

  void lower(const Node& n, Lowering& l) const override {
    if (n.op == "Reciprocal") {
      const int x = l.tensor(n, 0);
      IrOp& o = l.add_op(schema::OpKind_Binary, n, {x});
      o.binary_operation = schema::BinaryOperation_Div;
      o.constant_operand = 0;
      o.constant_dims.assign(l.model().tensors[static_cast<size_t>(x)].dims.size(), 1);  // storage rank
      o.weights = {1.f};
      return;
    }
    const Value &a = l.value(n.inputs[0]), &b = l.value(n.inputs[1]);
    const schema::BinaryOperation operation = operation_of(n);
    if (!a.is_const && !b.is_const) {
      // Both operands in one layout: 1-D maps NHWC as soon as either is (a conv's output).
      int ta = l.tensor(n, 0), tb = l.tensor(n, 1);
      if (a.shape.size() == 3 && (l.is_nhwc(ta) || l.is_nhwc(tb))) {
        ta = l.spatial_tensor(n, 0);
        tb = l.spatial_tensor(n, 1);
      }
      if (operation == schema::BinaryOperation_Add && fuse_residual(n, l, ta, tb)) return;
      IrOp& o = l.add_op(schema::OpKind_Binary, n, {ta, tb});
      o.binary_operation = operation;
      // x / sqrt(y) with that Sqrt read only here: x * rsqrt(y), a product instead of a quotient.
      IrOp* root = l.producer_of_kind(n, schema::OpKind_UnaryMath, 1);
      if (operation == schema::BinaryOperation_Div && root && root->unary_operation == schema::UnaryMathOperation_Sqrt && root->output == tb && ta != tb) {
        root->unary_operation = schema::UnaryMathOperation_Rsqrt;
        o.binary_operation = schema::BinaryOperation_Mul;
      }
      return;
    }
    const bool constant_first = a.is_const;
    const size_t xi = constant_first ? 1 : 0;
    const ConstTensor& c = constant_first ? a.c : b.c;
    const Value& x = constant_first ? b : a;
    const size_t rank = x.shape.size();
    const std::vector<int64_t> cd = padded(c.dims, rank);
    // Scalar or per-channel (per-feature of a rank-2 tensor): one value per channel.
    std::vector<double> per;
    if (rank >= 2 && rank <= 4) {
      const int64_t channels = x.shape[1];
      bool per_channel = cd[1] == channels;
      for (size_t k = 0; k < rank; ++k)
        if (k != 1 && cd[k] != 1) per_channel = false;
      if (c.numel() == 1 || per_channel)
        for (int64_t k = 0; k < channels; ++k) per.push_back(c.at(c.numel() == 1 ? 0 : k));
    }
    if (!per.empty() && !(constant_first && operation == schema::BinaryOperation_Div)) {
      std::vector<float> scale(per.size()), shift(per.size());
      for (size_t k = 0; k < per.size(); ++k) {
        double s = 1, t = 0;
        switch (operation) {
          case schema::BinaryOperation_Add: t = per[k]; break;
          case schema::BinaryOperation_Sub: constant_first ? (s = -1, t = per[k]) : (t = -per[k]); break;
          case schema::BinaryOperation_Mul: s = per[k]; break;
          case schema::BinaryOperation_Div: s = 1.0 / per[k]; break;
        }
        scale[k] = static_cast<float>(s);
        shift[k] = static_cast<float>(t);
      }
      // Not into a producer of row-major rank-3 tokens (a Dense over [N, L, C]): dim 1 is
      // no channel of theirs.
      IrOp* p = rank != 3 || l.is_nhwc(l.tensor(n, xi)) ? l.fusable_producer(n, Fusion::kScaleShift, xi) : nullptr;
      if (p) {
        l.scale_and_shift(*p, scale, shift);
        l.absorb(n, *p);
        return;
      }
      // Channels innermost: rank 2, and maps (rank 3 made NHWC).
      IrOp& o = l.add_op(schema::OpKind_ChannelAffine, n, {rank == 3 ? l.spatial_tensor(n, xi) : l.tensor(n, xi)});
      o.weights = scale;
      o.bias = shift;
      return;
    }
    // A 1-D map operand is made NHWC (its constant laid out to match).
    const int tx = rank == 3 ? l.spatial_tensor(n, xi) : l.tensor(n, xi);
    IrOp& o = l.add_op(schema::OpKind_Binary, n, {tx});
    o.binary_operation = operation;
    o.constant_operand = constant_first ? 0 : 1;
    // The constant in storage order: NCHW -> NHWC for rank 4.
    o.constant_dims = cd;
    o.weights.resize(static_cast<size_t>(c.numel()));
    if (rank == 3) {  // [1, C, L] -> storage [1, 1, L, C]
      const int64_t C = cd[1], L = cd[2];
      o.constant_dims = {1, 1, L, C};
      for (int64_t ch = 0; ch < C; ++ch)
        for (int64_t i = 0; i < L; ++i) o.weights[static_cast<size_t>(i * C + ch)] = static_cast<float>(c.at(ch * L + i));
    } else if (rank == 4) {
      const int64_t C = cd[1], H = cd[2], W = cd[3];
      o.constant_dims = {1, H, W, C};
      for (int64_t ch = 0; ch < C; ++ch)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t w = 0; w < W; ++w) o.weights[static_cast<size_t>((h * W + w) * C + ch)] = static_cast<float>(c.at((ch * H + h) * W + w));
    } else {
      for (int64_t k = 0; k < c.numel(); ++k) o.weights[static_cast<size_t>(k)] = static_cast<float>(c.at(k));
    }
  }

  flatbuffers::Offset<schema::Op> write(const IrModel&, const IrOp& op, EganWriter& w) const override {
    const bool constant = op.constant_operand >= 0;
    const int a = op.constant_operand == 0 ? -1 : op.inputs[0];
    const int b = op.constant_operand == 1 ? -1 : op.inputs[constant ? 0 : 1];
    const uint32_t buffer = constant ? w.blob(op.weights) : 0;
    const auto dims = constant ? w.fbb().CreateVector(op.constant_dims) : flatbuffers::Offset<flatbuffers::Vector<int64_t>>();
    const auto body = schema::CreateBinary(w.fbb(), a, b, op.output, op.binary_operation, buffer, dims);
    return w.op(op, schema::OpKind_Binary, body.Union());
  }
};

}  // namespace

template <>
const OpLowering& op_lowering<schema::OpKind_Binary>() {
  static const BinaryLowering lowering;
  return lowering;
}

}  // namespace edgegan::converter
