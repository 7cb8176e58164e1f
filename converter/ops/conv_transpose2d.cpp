// ConvTranspose2D from ONNX ConvTranspose; written split into its stride_h*stride_w
// phases (docs/phase-split.md), each tap's weights in column panels; grouped (ONNX
// group > 1): per phase the groups' sub-kernels one after the other
// (conv_transpose2d_grouped.h).
#include "converter/egan_writer.h"
#include "converter/errors.h"
#include "converter/lowering.h"
#include "converter/ops/op_lowering.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_grouped.h"

namespace edgegan::converter {
namespace {

class ConvTranspose2DLowering final : public OpLowering {
 public:
  std::vector<std::string> onnx_ops() const override { return {"ConvTranspose"}; }
  EpilogueFusions epilogue_fusions() const override { return {.activation = true, .scale_shift = true, .prelu = true}; }

  void infer(RuntimeNode& n) const override {
    const Value& x = n.runtime_input(0);
    const ConstTensor& w = n.float_constant(1, "weights");
    if (n.has_input(2)) n.float_constant(2, "bias");
    const ConvGeometry g = resolve_conv_transpose(n.node, x.shape, w.dims);
    if (x.shape.size() == 3) n.set_output({n.batch(), g.out_channels, g.out_w});  // 1-D: a map of height 1
    else n.set_output({n.batch(), g.out_channels, g.out_h, g.out_w});
  }

  void lower(const Node& n, Lowering& l) const override {
    const Value& x = l.value(n.inputs[0]);
    const ConstTensor& w = l.constant(n, 1);
    const int input = l.spatial_tensor(n, 0);
    IrOp& o = l.add_op(schema::OpKind_ConvTranspose2D, n, {input});
    o.geometry = resolve_conv_transpose(n, x.shape, w.dims);
    o.weights = w.f;  // [Cin][Cout/groups][kh][kw] ([Cin][Cout/groups][k] = kh 1 for 1-D)
    if (l.has_input(n, 2)) o.bias = l.constant(n, 2).f;
    if (!o.bias.empty() && static_cast<int64_t>(o.bias.size()) != o.geometry.out_channels)
      throw ConvertError(where(n) + ": bias must have one value per output channel");
  }

  flatbuffers::Offset<schema::Op> write(const IrModel& m, const IrOp& op, EganWriter& w) const override {
    auto& b = w.fbb();
    const ConvGeometry& g = op.geometry;
    const IrTensor& x = m.tensors[static_cast<size_t>(op.inputs[0])];
    cpu::ConvShape s;
    s.in_channels = g.in_channels;
    s.out_channels = g.out_channels;
    s.h = {x.dims[1], g.kernel_h, g.stride_h, g.dilation_h, g.pad_top, g.pad_bottom, g.out_h};
    s.w = {x.dims[2], g.kernel_w, g.stride_w, g.dilation_w, g.pad_left, g.pad_right, g.out_w};
    const auto ph = cpu::split_conv_transpose_axis(s.h), pw = cpu::split_conv_transpose_axis(s.w);
    const auto packed = cpu::pack_conv_transpose2d_grouped_weights(s, g.groups, ph, pw, op.weights.data(), cpu::kWeightPanelColumns);
    auto axis_phases = [&](const std::vector<cpu::AxisPhase>& phases) {
      std::vector<flatbuffers::Offset<schema::AxisPhase>> v;
      for (const auto& p : phases) {
        std::vector<int32_t> taps(p.taps.begin(), p.taps.end()), offs(p.offsets.begin(), p.offsets.end());
        v.push_back(schema::CreateAxisPhase(b, static_cast<int>(p.residue), b.CreateVector(taps), b.CreateVector(offs)));
      }
      return b.CreateVector(v);
    };
    const auto aph = axis_phases(ph), apw = axis_phases(pw);
    std::vector<flatbuffers::Offset<schema::ConvTranspose2DPhase>> phases;
    for (size_t i = 0; i < packed.size(); ++i)
      phases.push_back(schema::CreateConvTranspose2DPhase(b, static_cast<int>(i / pw.size()), static_cast<int>(i % pw.size()),
                                                          w.conv_transpose_blob(packed[i])));
    const auto ph_vec = b.CreateVector(phases);
    const auto ep = w.epilogue(op);
    const auto body = schema::CreateConvTranspose2D(
        b, op.inputs[0], op.output, static_cast<int>(g.in_channels), static_cast<int>(g.out_channels), static_cast<int>(g.kernel_h),
        static_cast<int>(g.kernel_w), static_cast<int>(g.stride_h), static_cast<int>(g.stride_w), static_cast<int>(g.dilation_h),
        static_cast<int>(g.dilation_w), static_cast<int>(g.pad_top), static_cast<int>(g.pad_left), static_cast<int>(g.pad_bottom),
        static_cast<int>(g.pad_right), aph, apw, ph_vec, ep, cpu::kWeightPanelColumns, static_cast<int>(g.groups));
    return w.op(op, schema::OpKind_ConvTranspose2D, body.Union());
  }

  int64_t output_channels(const IrOp& op) const override { return op.geometry.out_channels; }
  int64_t output_channel_of_weight(const IrOp& op, int64_t k) const override {  // [Cin][Cout/groups][kh][kw]
    const ConvGeometry& g = op.geometry;
    const int64_t cout_g = g.out_channels / g.groups, row = k / (g.kernel_h * g.kernel_w);  // row = ci*cout_g + co
    return row / cout_g / (g.in_channels / g.groups) * cout_g + row % cout_g;
  }
};

}  // namespace

template <>
const OpLowering& op_lowering<schema::OpKind_ConvTranspose2D>() {
  static const ConvTranspose2DLowering lowering;
  return lowering;
}

}  // namespace edgegan::converter
