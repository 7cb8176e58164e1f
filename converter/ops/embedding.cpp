// Embedding from ONNX Gather of a constant 2-D table by a run-time integer tensor
// (a conditional GAN's label lookup); Gather of constants is folded, not lowered.
// Gather of a run-time map's channels (axis 1) by constant indices is torch's x[:, idx]:
// a sliding-channel convolution's channel stack when a grouped Conv reads it
// (sliding_channel_conv.h), else Slices of its runs joined by a Concat.
#include "converter/egan_writer.h"
#include "converter/errors.h"
#include "converter/lowering.h"
#include "converter/ops/op_lowering.h"
#include "converter/ops/sliding_channel_conv.h"

namespace edgegan::converter {
namespace {

// A channel gather's indices, normalised (input 1: a constant 1-D integer tensor).
std::vector<int64_t> gathered_channels(const Node& n, const Value& data, const Value& idx) {
  if (!idx.c.is_int || idx.c.dims.size() != 1 || idx.c.dims[0] < 1)
    throw ConvertError(where(n) + ": input 'indices' of a channel gather must be a non-empty 1-D integer constant");
  const int64_t channels = data.shape[1];
  std::vector<int64_t> out;
  for (int64_t i : as_ints(idx, n, "indices")) {
    if (i < -channels || i >= channels)
      throw ConvertError(where(n) + ": input 'indices' holds " + std::to_string(i) + ", outside the " + std::to_string(channels) + " channels");
    out.push_back(i < 0 ? i + channels : i);
  }
  return out;
}

class EmbeddingLowering final : public OpLowering {
 public:
  std::vector<std::string> onnx_ops() const override { return {"Gather"}; }

  void infer(RuntimeNode& rn) const override {
    const Node& n = rn.node;
    check_attributes(n, {"axis"});
    const Value& data = rn.input(0);
    const Value& idx = rn.input(1);
    if (!data.is_const && idx.is_const) {  // channels of a run-time map
      if (data.is_int || data.shape.size() != 4) throw ConvertError(where(n) + ": a run-time Gather is supported on rank-4 float maps only");
      const int64_t axis = attr_int(n, "axis", 0);
      if (axis != 1 && axis != -3) throw ConvertError(where(n) + ": attribute 'axis' = " + std::to_string(axis) + " is not supported on a run-time map (only the channel axis 1)");
      std::vector<int64_t> out = data.shape;
      out[1] = static_cast<int64_t>(gathered_channels(n, data, idx).size());
      rn.set_output(out);
      return;
    }
    if (!data.is_const || idx.is_const) throw ConvertError(where(n) + ": only a constant table indexed by a run-time tensor is supported");
    if (attr_int(n, "axis", 0) != 0) throw ConvertError(where(n) + ": attribute 'axis' must be 0 for an embedding lookup");
    if (!idx.is_int) throw ConvertError(where(n) + ": indices must be integers");
    if (data.c.dims.size() != 2 || data.c.is_int) throw ConvertError(where(n) + ": the embedding table must be a 2-D float tensor");
    std::vector<int64_t> out = idx.shape;
    out.push_back(data.c.dims[1]);
    rn.set_output(out);
  }

  void lower(const Node& n, Lowering& l) const override {
    if (!l.value(n.inputs[0]).is_const) {
      const std::vector<int64_t> channels = gathered_channels(n, l.value(n.inputs[0]), l.value(n.inputs[1]));
      if (!lower_sliding_channel_stack(n, n.outputs[0], channels, l)) lower_channel_gather(n, channels, l);
      return;
    }
    const ConstTensor& table = l.constant(n, 0);
    IrOp& o = l.add_op(schema::OpKind_Embedding, n, {l.tensor(n, 1)});
    o.in_features = table.dims[0];
    o.out_features = table.dims[1];
    o.weights = table.f;
  }

  flatbuffers::Offset<schema::Op> write(const IrModel&, const IrOp& op, EganWriter& w) const override {
    const uint32_t table = w.blob(op.weights);
    const auto body = schema::CreateEmbedding(w.fbb(), op.inputs[0], op.output, static_cast<int>(op.in_features), static_cast<int>(op.out_features), table);
    return w.op(op, schema::OpKind_Embedding, body.Union());
  }
};

}  // namespace

template <>
const OpLowering& op_lowering<schema::OpKind_Embedding>() {
  static const EmbeddingLowering lowering;
  return lowering;
}

}  // namespace edgegan::converter
