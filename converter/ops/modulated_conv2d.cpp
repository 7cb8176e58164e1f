// ModulatedConv2D: no ONNX op of its own. converter/modulated_convs.cpp makes it from
// StyleGAN2's modulated-convolution chains; written here with its nested convolution
// written by that convolution's own lowering (Conv2D packed, ConvTranspose2D split into
// phases), without epilogue: bias and activation are this op's, after the demodulation.
#include "converter/egan_writer.h"
#include "converter/errors.h"
#include "converter/ops/op_lowering.h"

namespace edgegan::converter {
namespace {

class ModulatedConv2DLowering final : public OpLowering {
 public:
  std::vector<std::string> onnx_ops() const override { return {}; }
  void infer(RuntimeNode&) const override { throw ConvertError("internal: ModulatedConv2D has no ONNX op to infer"); }
  void lower(const Node&, Lowering&) const override { throw ConvertError("internal: ModulatedConv2D has no ONNX op to lower"); }

  flatbuffers::Offset<schema::Op> write(const IrModel& m, const IrOp& op, EganWriter& w) const override {
    IrOp conv;
    conv.kind = op.modulated_conv;
    conv.name = op.name;
    conv.inputs = {op.inputs[0]};
    conv.output = op.output;
    conv.geometry = op.geometry;
    conv.weights = op.weights;
    const auto nested = op_lowering(conv.kind).write(m, conv, w);
    const uint32_t squared_sums = op.demodulate ? w.blob(op.squared_sums) : 0;
    const auto ep = w.epilogue(op);
    const auto body = schema::CreateModulatedConv2D(w.fbb(), op.inputs[0], op.inputs[1], op.output, nested, op.demodulate, op.epsilon,
                                                    squared_sums, ep);
    return w.op(op, schema::OpKind_ModulatedConv2D, body.Union());
  }
};

}  // namespace

template <>
const OpLowering& op_lowering<schema::OpKind_ModulatedConv2D>() {
  static const ModulatedConv2DLowering lowering;
  return lowering;
}

}  // namespace edgegan::converter
