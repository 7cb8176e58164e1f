// SlidingChannelConv from torch's channel-stack export of a sliding-channel
// convolution: Gather (axis 1, constant indices) or channel Slices + Concat (axis 1),
// then a Conv with group = Cout. The pattern is matched by the Gather's lowering
// (embedding.cpp) and the Slice's (slice.cpp) through lower_sliding_channel_stack;
// the Conv node itself stays owned by Conv2D's lowering. Weights are written
// [Cout][kh][kw][window], one period of window starts with them.
#include "converter/ops/sliding_channel_conv.h"

#include "converter/egan_writer.h"
#include "converter/errors.h"
#include "converter/ops/op_lowering.h"
#include "kernels_cpu/sliding_channel_conv/sliding_channel_conv.h"

namespace edgegan::converter {

bool lower_sliding_channel_stack(const Node& source, const std::string& stack, const std::vector<int64_t>& channels, Lowering& l) {
  const Value& x = l.value(source.inputs[0]);
  if (x.is_const || x.is_int || x.shape.size() != 4) return false;
  const Node* conv = l.sole_reader(stack);
  if (!conv || conv->op != "Conv" || conv->inputs.size() < 2 || l.resolve(conv->inputs[0]) != l.resolve(stack)) return false;
  const Value& wv = l.value(conv->inputs[1]);
  if (!wv.is_const || wv.c.is_int || wv.c.dims.size() != 4) return false;
  if (conv->inputs.size() > 2 && !conv->inputs[2].empty() && !l.value(conv->inputs[2]).is_const) return false;
  const int64_t cin = x.shape[1], cout = wv.c.dims[0], gw = wv.c.dims[1];
  if (attr_int(*conv, "group", 1) != cout || gw < 1 || gw > cin || static_cast<int64_t>(channels.size()) != cout * gw) return false;
  // Cyclic windows from channel 0 with one start stride s in 1..Cin.
  for (int64_t o = 0; o < cout; ++o)
    for (int64_t j = 0; j < gw; ++j)
      if (channels[static_cast<size_t>(o * gw + j)] != (channels[static_cast<size_t>(o * gw)] + j) % cin) return false;
  if (channels[0] != 0) return false;
  int64_t s = cout > 1 ? channels[static_cast<size_t>(gw)] % cin : gw % cin;
  if (s == 0) s = cin;
  for (int64_t o = 0; o < cout; ++o)
    if (channels[static_cast<size_t>(o * gw)] != o * s % cin) return false;

  ConvGeometry g = resolve_conv(*conv, l.value(stack).shape, wv.c.dims);
  g.in_channels = cin;
  g.groups = cout;
  IrOp& o = l.add_op(schema::OpKind_SlidingChannelConv, *conv, {l.spatial_tensor(source, 0)});
  o.name = source.name + "+" + conv->name;
  o.geometry = g;
  o.window = gw;
  o.start_stride = s;
  o.weights = wv.c.f;  // [Cout][gw][kh][kw]
  if (l.has_input(*conv, 2)) o.bias = l.constant(*conv, 2).f;
  if (!o.bias.empty() && static_cast<int64_t>(o.bias.size()) != cout)
    throw ConvertError(where(*conv) + ": bias must have one value per output channel");
  l.claim(*conv);
  return true;
}

void lower_channel_gather(const Node& n, const std::vector<int64_t>& channels, Lowering& l) {
  const Value& x = l.value(n.inputs[0]);
  const int in = l.spatial_tensor(n, 0);
  struct Run {
    int64_t start, count;
  };
  std::vector<Run> runs;
  for (int64_t c : channels) {
    if (!runs.empty() && runs.back().start + runs.back().count == c) ++runs.back().count;
    else runs.push_back({c, 1});
  }
  if (runs.size() == 1) {
    IrOp& op = l.add_op(schema::OpKind_Slice, n, {in});
    op.axis = 3;
    op.start = runs[0].start;
    return;
  }
  std::vector<int> parts;
  for (size_t k = 0; k < runs.size(); ++k) {
    std::vector<int64_t> shape = x.shape;
    shape[1] = runs[k].count;
    IrOp& op = l.add_op_with_new_tensor(schema::OpKind_Slice, n, {in}, n.outputs[0] + ":channels" + std::to_string(k), shape);
    op.axis = 3;
    op.start = runs[k].start;
    parts.push_back(op.output);
  }
  IrOp& cat = l.add_op(schema::OpKind_Concat, n, parts);
  cat.axis = 3;
}

namespace {

// Never taken from an ONNX op on its own: the Gather and Slice lowerings add it.
class SlidingChannelConvLowering final : public OpLowering {
 public:
  std::vector<std::string> onnx_ops() const override { return {}; }
  EpilogueFusions epilogue_fusions() const override { return {.activation = true, .scale_shift = true}; }
  void infer(RuntimeNode& n) const override { throw ConvertError(where(n.node) + ": internal: SlidingChannelConv has no ONNX op of its own"); }
  void lower(const Node& n, Lowering&) const override { throw ConvertError(where(n) + ": internal: SlidingChannelConv has no ONNX op of its own"); }

  flatbuffers::Offset<schema::Op> write(const IrModel&, const IrOp& op, EganWriter& w) const override {
    const ConvGeometry& g = op.geometry;
    cpu::ConvShape s;
    s.in_channels = g.in_channels;
    s.out_channels = g.out_channels;
    s.h.kernel = g.kernel_h;
    s.w.kernel = g.kernel_w;
    const std::vector<int32_t> starts = cpu::sliding_channel_conv_starts(g.in_channels, g.out_channels, op.start_stride);
    const cpu::SlidingChannelPlan plan = cpu::plan_sliding_channel_conv(s, op.window, starts);
    std::vector<float> packed(op.weights.size());
    cpu::pack_sliding_channel_conv_weights(plan, op.weights.data(), packed.data());
    const uint32_t weights = w.blob(packed);
    const auto ep = w.epilogue(op);
    const auto table = w.fbb().CreateVector(starts);
    const auto body = schema::CreateSlidingChannelConv(
        w.fbb(), op.inputs[0], op.output, static_cast<int>(g.in_channels), static_cast<int>(g.out_channels), static_cast<int>(op.window),
        static_cast<int>(op.start_stride), table, static_cast<int>(g.kernel_h), static_cast<int>(g.kernel_w), static_cast<int>(g.stride_h),
        static_cast<int>(g.stride_w), static_cast<int>(g.dilation_h), static_cast<int>(g.dilation_w), static_cast<int>(g.pad_top),
        static_cast<int>(g.pad_left), static_cast<int>(g.pad_bottom), static_cast<int>(g.pad_right), weights, ep);
    return w.op(op, schema::OpKind_SlidingChannelConv, body.Union());
  }

  int64_t output_channels(const IrOp& op) const override { return op.geometry.out_channels; }
  int64_t output_channel_of_weight(const IrOp& op, int64_t k) const override {  // [Cout][gw][kh][kw]
    return k / (op.window * op.geometry.kernel_h * op.geometry.kernel_w);
  }
};

}  // namespace

template <>
const OpLowering& op_lowering<schema::OpKind_SlidingChannelConv>() {
  static const SlidingChannelConvLowering lowering;
  return lowering;
}

}  // namespace edgegan::converter
