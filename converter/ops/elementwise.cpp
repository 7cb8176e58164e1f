// Elementwise from ONNX Relu, LeakyRelu, Tanh and Sigmoid: fused into the epilogue of
// the op that produced the input when that op has no other reader and no activation
// yet; only what cannot fuse becomes an Elementwise op.
#include "converter/egan_writer.h"
#include "converter/errors.h"
#include "converter/lowering.h"
#include "converter/ops/op_lowering.h"

namespace edgegan::converter {
namespace {

class ElementwiseLowering final : public OpLowering {
 public:
  std::vector<std::string> onnx_ops() const override { return {"Relu", "LeakyRelu", "Tanh", "Sigmoid"}; }

  void infer(RuntimeNode& rn) const override {
    check_attributes(rn.node, rn.node.op == "LeakyRelu" ? std::initializer_list<const char*>{"alpha"} : std::initializer_list<const char*>{});
    rn.set_output(rn.runtime_input(0).shape);
  }

  void lower(const Node& n, Lowering& l) const override {
    const schema::Activation act = n.op == "Relu"      ? schema::Activation_Relu
                                   : n.op == "Tanh"    ? schema::Activation_Tanh
                                   : n.op == "Sigmoid" ? schema::Activation_Sigmoid
                                                       : schema::Activation_LeakyRelu;
    const float alpha = n.op == "LeakyRelu" ? attr_float(n, "alpha", 0.01f) : 0.01f;
    if (IrOp* p = l.fusable_producer(n, {schema::OpKind_Conv2D, schema::OpKind_ConvTranspose2D, schema::OpKind_Dense, schema::OpKind_ChannelAffine,
                                          schema::OpKind_GroupNorm})) {
      p->activation = act;
      p->alpha = alpha;
      l.absorb(n, *p);
      l.model().activations_fused++;
      return;
    }
    IrOp& o = l.add_op(schema::OpKind_Elementwise, n, {l.tensor(n, 0)});
    o.activation = act;
    o.alpha = alpha;
  }

  flatbuffers::Offset<schema::Op> write(const IrModel&, const IrOp& op, EganWriter& w) const override {
    const auto body = schema::CreateElementwise(w.fbb(), op.inputs[0], op.output, op.activation, op.alpha);
    return w.op(op, schema::OpKind_Elementwise, body.Union());
  }
};

}  // namespace

template <>
const OpLowering& op_lowering<schema::OpKind_Elementwise>() {
  static const ElementwiseLowering lowering;
  return lowering;
}

}  // namespace edgegan::converter
