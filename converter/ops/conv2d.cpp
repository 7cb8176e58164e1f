// Conv2D from ONNX Conv (any group); weights written as [kh][kw][Cin/group][Cout].
#include "converter/egan_writer.h"
#include "converter/errors.h"
#include "converter/lowering.h"
#include "converter/ops/op_lowering.h"
#include "kernels_cpu/conv2d/conv2d_grouped.h"

namespace edgegan::converter {
namespace {

class Conv2DLowering final : public OpLowering {
 public:
  std::vector<std::string> onnx_ops() const override { return {"Conv"}; }
  EpilogueFusions epilogue_fusions() const override { return {.activation = true, .scale_shift = true, .residual = true, .prelu = true}; }

  void infer(RuntimeNode& n) const override {
    const Value& x = n.runtime_input(0);
    const ConstTensor& w = n.float_constant(1, "weights");
    if (n.has_input(2)) n.float_constant(2, "bias");
    const ConvGeometry g = resolve_conv(n.node, x.shape, w.dims);
    if (x.shape.size() == 3) n.set_output({n.batch(), g.out_channels, g.out_w});  // 1-D: a map of height 1
    else n.set_output({n.batch(), g.out_channels, g.out_h, g.out_w});
  }

  void lower(const Node& n, Lowering& l) const override {
    const Value& x = l.value(n.inputs[0]);
    const ConstTensor& w = l.constant(n, 1);
    ConvGeometry g = resolve_conv(n, x.shape, w.dims);
    // A constant zero Pad that only this Conv reads folds into its pads (exact): the
    // Pad's op becomes the Conv, reading the Pad's input.
    IrOp* pad = l.producer_of_kind(n, schema::OpKind_Pad);
    if (pad && (pad->pad_mode != schema::PadMode_Constant || pad->pad_value != 0.f || pad->pad_align > 0 || pad->pad_size_scale > 0)) pad = nullptr;
    const int64_t conv_pads[4] = {g.pad_top, g.pad_left, g.pad_bottom, g.pad_right};
    for (int k = 0; pad && k < 4; ++k)
      if (pad->pads[k] < 0 || pad->pads[k] + conv_pads[k] > 4096) pad = nullptr;
    if (pad) {
      g.pad_top += pad->pads[0];
      g.pad_left += pad->pads[1];
      g.pad_bottom += pad->pads[2];
      g.pad_right += pad->pads[3];
      pad->kind = schema::OpKind_Conv2D;
      l.take_over(*pad, n);
    }
    IrOp& o = pad ? *pad : l.add_op(schema::OpKind_Conv2D, n, {l.spatial_tensor(n, 0)});
    o.geometry = g;
    o.weights = w.f;  // [Cout][Cin/groups][kh][kw] ([Cout][Cin/groups][k] = kh 1 for 1-D)
    if (l.has_input(n, 2)) o.bias = l.constant(n, 2).f;
    if (!o.bias.empty() && static_cast<int64_t>(o.bias.size()) != o.geometry.out_channels)
      throw ConvertError(where(n) + ": bias must have one value per output channel");
  }

  flatbuffers::Offset<schema::Op> write(const IrModel&, const IrOp& op, EganWriter& w) const override {
    const ConvGeometry& g = op.geometry;
    cpu::ConvShape s;
    s.in_channels = g.in_channels;
    s.out_channels = g.out_channels;
    s.h.kernel = g.kernel_h;
    s.w.kernel = g.kernel_w;
    std::vector<float> packed(op.weights.size());
    cpu::pack_conv2d_grouped_weights(s, g.groups, op.weights.data(), packed.data());
    const uint32_t weights = w.blob(packed);
    const auto ep = w.epilogue(op);
    const auto body = schema::CreateConv2D(w.fbb(), op.inputs[0], op.output, static_cast<int>(g.in_channels), static_cast<int>(g.out_channels),
                                           static_cast<int>(g.kernel_h), static_cast<int>(g.kernel_w), static_cast<int>(g.stride_h),
                                           static_cast<int>(g.stride_w), static_cast<int>(g.dilation_h), static_cast<int>(g.dilation_w),
                                           static_cast<int>(g.pad_top), static_cast<int>(g.pad_left), static_cast<int>(g.pad_bottom),
                                           static_cast<int>(g.pad_right), weights, ep, static_cast<int>(g.groups),
                                           // a fused input map (converter/conv_input_maps.h)
                                           static_cast<int>(op.input_upsample[0]), static_cast<int>(op.input_upsample[1]),
                                           static_cast<schema::PadMode>(op.input_pad_mode), static_cast<int>(op.input_pads[0]),
                                           static_cast<int>(op.input_pads[1]), static_cast<int>(op.input_pads[2]), static_cast<int>(op.input_pads[3]), residual_of(op));
    return w.op(op, schema::OpKind_Conv2D, body.Union());
  }

  int64_t output_channels(const IrOp& op) const override { return op.geometry.out_channels; }
  int64_t output_channel_of_weight(const IrOp& op, int64_t k) const override {  // [Cout][Cin/groups][kh][kw]
    return k / (op.geometry.in_channels / op.geometry.groups * op.geometry.kernel_h * op.geometry.kernel_w);
  }
};

}  // namespace

template <>
const OpLowering& op_lowering<schema::OpKind_Conv2D>() {
  static const Conv2DLowering lowering;
  return lowering;
}

}  // namespace edgegan::converter
