// GroupNorm from ONNX InstanceNormalization (groups = channels) and GroupNormalization
// (opset 18: scale and bias per group; opset 21: per channel) on NCHW maps, and from
// the graph torch <= 1.13 exports for nn.GroupNorm:
//   Reshape(x -> [N, G, -1]) -> InstanceNormalization(G values) -> Reshape(-> x's shape)
//   -> Mul(gamma [C,1,1]) -> Add(beta [C,1,1])
// The first Reshape becomes the GroupNorm (on x itself), the Reshape back an alias, and the
// per-channel Mul and Add fold into its scale and shift (converter/ops/channel_affine.cpp),
// as an activation after it fuses (converter/ops/elementwise.cpp).
#include <cmath>

#include "converter/egan_writer.h"
#include "converter/errors.h"
#include "converter/lowering.h"
#include "converter/ops/op_lowering.h"

namespace edgegan::converter {
namespace {

float checked_epsilon(const Node& n) {
  const float eps = attr_float(n, "epsilon", 1e-5f);
  if (!std::isfinite(eps) || eps < 0.f)
    throw ConvertError(where(n) + ": attribute 'epsilon' = " + std::to_string(eps) + " is not supported (finite, >= 0)");
  return eps;
}

// Per-channel values from `values` holding one per channel, or one per group of channels/groups channels.
std::vector<float> per_channel(const ConstTensor& values, int64_t channels, int64_t groups) {
  std::vector<float> out(static_cast<size_t>(channels));
  const int64_t per_group = channels / groups;
  for (int64_t c = 0; c < channels; ++c)
    out[static_cast<size_t>(c)] = static_cast<float>(values.at(values.numel() == channels ? c : c / per_group));
  return out;
}

class GroupNormLowering final : public OpLowering {
 public:
  std::vector<std::string> onnx_ops() const override { return {"InstanceNormalization", "GroupNormalization"}; }
  EpilogueFusions epilogue_fusions() const override { return {.activation = true, .scale_shift = true, .residual = true}; }

  void infer(RuntimeNode& rn) const override {
    const Node& n = rn.node;
    const Value& x = rn.runtime_input(0);
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    if (n.op == "InstanceNormalization") {
      check_attributes(n, {"epsilon"});
      checked_epsilon(n);
      // Rank 3 only as part of torch's GroupNorm export (checked when lowering).
      if (rank != 4 && rank != 3)
        throw ConvertError(where(n) + ": InstanceNormalization on rank-" + std::to_string(rank) + " tensors is not supported (only NCHW maps)");
      for (size_t k = 1; k <= 2; ++k)
        if (rn.float_constant(k, k == 1 ? "scale" : "B").numel() != x.shape[1])
          throw ConvertError(where(n) + ": input '" + n.inputs[k] + "' does not have one value per channel (" + std::to_string(x.shape[1]) + ")");
    } else {
      check_attributes(n, {"epsilon", "num_groups", "stash_type"});
      checked_epsilon(n);
      if (!find_attr(n, "num_groups")) throw ConvertError(where(n) + ": attribute 'num_groups' is missing");
      const int64_t stash = attr_int(n, "stash_type", 1);
      if (stash != 1)
        throw ConvertError(where(n) + ": attribute 'stash_type' = " + std::to_string(stash) + " is not supported (only 1: float32 statistics)");
      if (rank != 4)
        throw ConvertError(where(n) + ": GroupNormalization on rank-" + std::to_string(rank) + " tensors is not supported (only NCHW maps)");
      const int64_t channels = x.shape[1], groups = attr_int(n, "num_groups", 0);
      if (groups < 1 || channels % groups != 0)
        throw ConvertError(where(n) + ": attribute 'num_groups' = " + std::to_string(groups) + " does not divide the " + std::to_string(channels) + " channels");
      for (size_t k = 1; k <= 2; ++k) {
        const int64_t count = rn.float_constant(k, k == 1 ? "scale" : "bias").numel();
        if (count != channels && count != groups)
          throw ConvertError(where(n) + ": input '" + n.inputs[k] + "' has " + std::to_string(count) +
                             " values; GroupNormalization takes one per group (opset 18) or one per channel (opset 21)");
      }
    }
    rn.set_output(x.shape);
  }

  void lower(const Node& n, Lowering& l) const override {
    const Value& x = l.value(n.inputs[0]);
    const ConstTensor &scale = l.constant(n, 1), &shift = l.constant(n, 2);
    if (x.shape.size() == 3) return lower_torch_group_norm(n, l, scale, shift);
    const int64_t channels = x.shape[1];
    const int64_t groups = n.op == "InstanceNormalization" ? channels : attr_int(n, "num_groups", 0);
    IrOp& o = l.add_op(schema::OpKind_GroupNorm, n, {l.tensor(n, 0)});
    o.norm_groups = groups;
    o.epsilon = checked_epsilon(n);
    o.weights = per_channel(scale, channels, groups);
    o.bias = per_channel(shift, channels, groups);
  }

  flatbuffers::Offset<schema::Op> write(const IrModel&, const IrOp& op, EganWriter& w) const override {
    const uint32_t scale = w.blob(op.weights), shift = w.blob(op.bias);
    const auto body = schema::CreateGroupNorm(w.fbb(), op.inputs[0], op.output, static_cast<int>(op.weights.size()),
                                              static_cast<int>(op.norm_groups), op.epsilon, scale, shift, op.activation, op.alpha, op.beta, residual_of(op));
    return w.op(op, schema::OpKind_GroupNorm, body.Union());
  }

 private:
  // InstanceNormalization of [N, G, L], read from a Reshape of an NCHW map x and read
  // only by a reshape: a GroupNorm of x with G groups, whose output tensor keeps x's shape
  // (the reshape after it becomes an alias when it restores that shape).
  static void lower_torch_group_norm(const Node& n, Lowering& l, const ConstTensor& scale, const ConstTensor& shift) {
    const std::string form = ": InstanceNormalization of a rank-3 tensor is supported only as torch exports nn.GroupNorm "
                             "(Reshape of an NCHW map to [N, groups, -1] read by nothing else, this node, then a Reshape)";
    IrOp* reshape = l.producer_of_kind(n, schema::OpKind_Reshape);
    if (!reshape) throw ConvertError(where(n) + form + "; its input is not such a Reshape");
    const IrTensor source = l.model().tensors[static_cast<size_t>(reshape->inputs[0])];
    const int64_t groups = l.value(n.inputs[0]).shape[1];
    if (!source.nhwc || source.is_int || source.dims[3] % groups != 0)
      throw ConvertError(where(n) + form + "; the Reshape's input is not an NCHW map whose channels the " + std::to_string(groups) +
                         " groups divide");
    const Node* reader = l.sole_reader(n.outputs[0]);
    if (!reader || lowering_of_onnx(reader->op) != &op_lowering<schema::OpKind_Reshape>())
      throw ConvertError(where(n) + form + "; its output is not read by one reshape only");
    const int64_t channels = source.dims[3];
    reshape->kind = schema::OpKind_GroupNorm;
    reshape->norm_groups = groups;
    reshape->epsilon = checked_epsilon(n);
    reshape->weights = per_channel(scale, channels, groups);
    reshape->bias = per_channel(shift, channels, groups);
    IrTensor& out = l.model().tensors[static_cast<size_t>(reshape->output)];
    out.dims = source.dims;
    out.nhwc = true;
    l.absorb(n, *reshape);
  }
};

}  // namespace

template <>
const OpLowering& op_lowering<schema::OpKind_GroupNorm>() {
  static const GroupNormLowering lowering;
  return lowering;
}

}  // namespace edgegan::converter
