// ChannelAffine from ONNX BatchNormalization (eval mode); the constant scalar or
// per-channel Add/Sub/Mul/Div come here through converter/ops/binary.cpp. Either folds into
// the op that produced its input when that op's kind takes a scale and shift
// (OpLowering::epilogue_fusions) and this is its only reader; only what cannot fold
// becomes a ChannelAffine op.
#include <cmath>

#include "converter/egan_writer.h"
#include "converter/errors.h"
#include "converter/lowering.h"
#include "converter/ops/op_lowering.h"

namespace edgegan::converter {
namespace {

class ChannelAffineLowering final : public OpLowering {
 public:
  std::vector<std::string> onnx_ops() const override { return {"BatchNormalization"}; }
  EpilogueFusions epilogue_fusions() const override { return {.activation = true, .scale_shift = true}; }

  void infer(RuntimeNode& rn) const override {
    const Node& n = rn.node;
    const Value& x = rn.runtime_input(0);
    if (n.op == "BatchNormalization") {
      check_attributes(n, {"epsilon", "momentum", "training_mode", "spatial"});
      if (attr_int(n, "training_mode", 0) != 0)
        throw ConvertError(where(n) + ": attribute 'training_mode' = 1 is not supported (export with model.eval())");
      if (attr_int(n, "spatial", 1) != 1) throw ConvertError(where(n) + ": attribute 'spatial' = 0 is not supported");
      for (size_t k = 1; k <= 4; ++k)
        if (rn.constant(k, "BatchNorm parameters").numel() != (x.shape.size() > 1 ? x.shape[1] : 0))
          throw ConvertError(where(n) + ": parameter '" + n.inputs[k] + "' does not have one value per channel");
      for (size_t k = 1; k < n.outputs.size(); ++k)
        if (!n.outputs[k].empty()) throw ConvertError(where(n) + ": training-mode outputs (running mean/var) are not supported");
      rn.set_output(x.shape);
      return;
    }
    throw ConvertError(where(n) + ": internal: not a BatchNormalization");
  }

  void lower(const Node& n, Lowering& l) const override {
    const Value& x = l.value(n.inputs[0]);
    std::vector<float> scale, shift;
    {
      if (x.shape.size() < 2 || x.shape.size() > 4)
        throw ConvertError(where(n) + ": BatchNorm on rank " + std::to_string(x.shape.size()) + " tensors is not supported");
      const float eps = attr_float(n, "epsilon", 1e-5f);
      const ConstTensor &gamma = l.constant(n, 1), &beta = l.constant(n, 2), &mean = l.constant(n, 3), &var = l.constant(n, 4);
      const size_t c = static_cast<size_t>(x.shape[1]);
      scale.resize(c);
      shift.resize(c);
      for (size_t k = 0; k < c; ++k) {
        // In double, so the folded weights round once.
        const double s = gamma.at(static_cast<int64_t>(k)) / std::sqrt(var.at(static_cast<int64_t>(k)) + static_cast<double>(eps));
        scale[k] = static_cast<float>(s);
        shift[k] = static_cast<float>(beta.at(static_cast<int64_t>(k)) - mean.at(static_cast<int64_t>(k)) * s);
      }
    }
    if (IrOp* p = l.fusable_producer(n, Fusion::kScaleShift)) {
      l.scale_and_shift(*p, scale, shift);
      l.absorb(n, *p);
      if (n.op == "BatchNormalization") l.model().batchnorms_folded++;
      return;
    }
    // Channels are the innermost storage axis: rank 2, and maps (rank 3 made NHWC).
    IrOp& o = l.add_op(schema::OpKind_ChannelAffine, n, {x.shape.size() == 3 ? l.spatial_tensor(n, 0) : l.tensor(n, 0)});
    o.weights = scale;
    o.bias = shift;
  }

  flatbuffers::Offset<schema::Op> write(const IrModel&, const IrOp& op, EganWriter& w) const override {
    const uint32_t scale = w.blob(op.weights), shift = w.blob(op.bias);
    const auto body = schema::CreateChannelAffine(w.fbb(), op.inputs[0], op.output, static_cast<int>(op.weights.size()), scale, shift,
                                                  op.activation, op.alpha, op.beta);
    return w.op(op, schema::OpKind_ChannelAffine, body.Union());
  }
};

}  // namespace

template <>
const OpLowering& op_lowering<schema::OpKind_ChannelAffine>() {
  static const ChannelAffineLowering lowering;
  return lowering;
}

}  // namespace edgegan::converter
