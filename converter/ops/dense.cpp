// Dense from ONNX Gemm and MatMul (x · W, with Gemm's alpha, beta and transB folded
// into the weights and bias); weights written as [in][out]. A MatMul of two run-time
// tensors is a MatMul op (matmul.cpp). A MatMul with constant weights over the last axis
// of a row-major tensor of rank 3 or more (a Linear on tokens [N, L, C]) is a Dense over
// its rows, the Add of its bias read only there taken as the Dense's bias.
#include "converter/egan_writer.h"
#include "converter/errors.h"
#include "converter/lowering.h"
#include "converter/ops/matmul.h"
#include "converter/ops/op_lowering.h"

namespace edgegan::converter {
namespace {

class DenseLowering final : public OpLowering {
 public:
  std::vector<std::string> onnx_ops() const override { return {"Gemm", "MatMul"}; }
  EpilogueFusions epilogue_fusions() const override { return {.activation = true, .scale_shift = true}; }

  void infer(RuntimeNode& rn) const override {
    const Node& n = rn.node;
    const Value& x = rn.runtime_input(0);
    if (n.op == "MatMul") {
      if (rn.has_input(1) && !rn.input(1).is_const) return infer_matmul(rn);  // both computed: attention
      check_attributes(n, {});
      if (x.shape.size() < 2) throw ConvertError(where(n) + ": a product of a rank-1 input is not supported");
      const ConstTensor& w = rn.float_constant(1, "weights");
      if (w.dims.size() != 2 || w.dims[0] != x.shape.back()) throw ConvertError(where(n) + ": weights do not match the input features");
      std::vector<int64_t> out = x.shape;
      out.back() = w.dims[1];
      rn.set_output(out);
      return;
    }
    check_attributes(n, {"alpha", "beta", "transA", "transB"});
    if (attr_int(n, "transA", 0) != 0)
      throw ConvertError(where(n) + ": attribute 'transA' = 1 is not supported (the activation must be the left operand)");
    if (x.shape.size() != 2) throw ConvertError(where(n) + ": input must be 2-D [batch, features]");
    const ConstTensor& w = rn.float_constant(1, "weights");
    if (w.dims.size() != 2) throw ConvertError(where(n) + ": weights must be 2-D");
    const bool tb = attr_int(n, "transB", 0) != 0;
    const int64_t k = tb ? w.dims[1] : w.dims[0], m = tb ? w.dims[0] : w.dims[1];
    if (k != x.shape[1])
      throw ConvertError(where(n) + ": input has " + std::to_string(x.shape[1]) + " features, the weights expect " + std::to_string(k));
    if (rn.has_input(2)) {
      const ConstTensor& c = rn.float_constant(2, "bias");
      if (c.numel() != m && c.numel() != 1) throw ConvertError(where(n) + ": bias must have one value per output feature");
    }
    rn.set_output({rn.batch(), m});
  }

  void lower(const Node& n, Lowering& l) const override {
    if (!l.value(n.inputs[1]).is_const) return lower_matmul(n, l);
    const ConstTensor& w = l.constant(n, 1);
    const bool gemm = n.op == "Gemm";
    const size_t rank = l.value(n.inputs[0]).shape.size();
    if (rank > 2) return lower_rows(n, l, w);
    const bool tb = gemm && attr_int(n, "transB", 0) != 0;
    const float alpha = gemm ? attr_float(n, "alpha", 1.f) : 1.f;
    const float beta = gemm ? attr_float(n, "beta", 1.f) : 1.f;
    IrOp& o = l.add_op(schema::OpKind_Dense, n, {l.tensor(n, 0)});
    o.in_features = tb ? w.dims[1] : w.dims[0];
    o.out_features = tb ? w.dims[0] : w.dims[1];
    o.weights.resize(static_cast<size_t>(o.in_features * o.out_features));
    for (int64_t i = 0; i < o.in_features; ++i)
      for (int64_t j = 0; j < o.out_features; ++j)
        o.weights[static_cast<size_t>(i * o.out_features + j)] = alpha * w.f[static_cast<size_t>(tb ? j * o.in_features + i : i * o.out_features + j)];
    if (gemm && l.has_input(n, 2)) {
      const ConstTensor& c = l.constant(n, 2);
      for (int64_t j = 0; j < o.out_features; ++j) o.bias.push_back(beta * static_cast<float>(c.at(c.numel() == 1 ? 0 : j)));
    }
  }

  flatbuffers::Offset<schema::Op> write(const IrModel&, const IrOp& op, EganWriter& w) const override {
    const uint32_t weights = w.blob(op.weights);
    const auto ep = w.epilogue(op);
    const auto body = schema::CreateDense(w.fbb(), op.inputs[0], op.output, static_cast<int>(op.in_features), static_cast<int>(op.out_features),
                                          weights, ep);
    return w.op(op, schema::OpKind_Dense, body.Union());
  }

  int64_t output_channels(const IrOp& op) const override { return op.out_features; }
  int64_t output_channel_of_weight(const IrOp& op, int64_t k) const override { return k % op.out_features; }  // [in][out]

 private:
  // x [N, ..., in] (row-major) · W [in][out]; the bias Add after it, when it is the
  // MatMul's only reader and adds a constant of one value per output feature, is the
  // Dense's bias (its output the Add's).
  static void lower_rows(const Node& n, Lowering& l, const ConstTensor& w) {
    int x = l.tensor(n, 0);
    const size_t rank = l.value(n.inputs[0]).shape.size();
    // Tokens a per-channel op made a map ([N, L, C] stored [N, 1, C, L]: the LayerNorm's
    // affine Binary) are copied back into rows.
    if (rank == 3 && l.is_nhwc(x))
      x = l.add_op_with_new_tensor(schema::OpKind_Reshape, n, {x}, n.outputs[0] + ":rows", l.value(n.inputs[0]).shape).output;
    if (l.is_nhwc(x))
      throw ConvertError(where(n) + ": a product with constant weights over the last axis of a rank-" + std::to_string(rank) +
                         " tensor stored as a map (NHWC) is not supported");
    const int64_t in = w.dims[0], out = w.dims[1];
    std::vector<float> bias;
    const Node* add = l.sole_consumer(n);
    if (add && add->op == "Add" && add->inputs.size() == 2) {
      const std::string self = l.resolve(n.outputs[0]);
      const size_t other = l.resolve(add->inputs[0]) == self ? 1 : 0;
      const Value& c = l.value(add->inputs[other]);
      bool per_feature = c.is_const && !c.c.is_int && c.c.numel() == out && c.c.dims.size() <= rank && l.resolve(add->inputs[1 - other]) == self;
      for (size_t k = 0; per_feature && k + 1 < c.c.dims.size(); ++k) per_feature = c.c.dims[k] == 1;
      if (per_feature) {
        for (int64_t j = 0; j < out; ++j) bias.push_back(static_cast<float>(c.c.at(j)));
      } else {
        add = nullptr;
      }
    } else {
      add = nullptr;
    }
    IrOp& o = l.add_op(schema::OpKind_Dense, add ? *add : n, {x});
    if (add) {
      o.name = n.name + "+" + add->name;
      l.claim(*add);
    }
    o.in_features = in;
    o.out_features = out;
    o.weights = w.f;  // [in][out] as ONNX MatMul's
    o.bias = std::move(bias);
  }
};

}  // namespace

template <>
const OpLowering& op_lowering<schema::OpKind_Dense>() {
  static const DenseLowering lowering;
  return lowering;
}

}  // namespace edgegan::converter
