// Pad from ONNX Pad (opsets 11+: pads, constant_value and axes as inputs; modes
// constant, reflect, edge, wrap) on the H and W axes of an NCHW map, or the L axis of
// an NCL map (stored as the height-1 NHWC map [N, 1, L, C], as 1-D convolutions read). A constant
// zero Pad read only by a Conv folds into the Conv's pads (converter/ops/conv2d.cpp).
// Two attributes of edgegan's own, which the checkpoint importer writes for a release that
// pads and crops by the picture's size: `edgegan_align` N grows the far pads (bottom,
// right) so the padded sides are multiples of N; `edgegan_size_scale` S with a fifth
// input R sets them so the output is S x R's height and width. Both are resolved at each
// planned size (schema Pad.align, Pad.size_of).
#include <cmath>

#include "converter/egan_writer.h"
#include "converter/errors.h"
#include "converter/lowering.h"
#include "converter/ops/op_lowering.h"

namespace edgegan::converter {
namespace {

struct PadParams {
  schema::PadMode mode = schema::PadMode_Constant;
  float value = 0.f;
  int64_t pads[4] = {0, 0, 0, 0};  // top, left, bottom, right
  int64_t align = 0, size_scale = 0;
};

schema::PadMode pad_mode(const Node& n) {
  const std::string mode = attr_string(n, "mode", "constant");
  if (mode == "constant") return schema::PadMode_Constant;
  if (mode == "reflect") return schema::PadMode_Reflect;
  if (mode == "edge") return schema::PadMode_Edge;
  if (mode == "wrap") return schema::PadMode_Wrap;
  throw ConvertError(where(n) + ": attribute 'mode' = '" + mode + "' is not supported (constant, reflect, edge, wrap)");
}

// Reads and checks the node against its (NCHW) input shape.
PadParams pad_params(const Node& n, const std::map<std::string, Value>& values, const std::vector<int64_t>& x) {
  check_attributes(n, {"mode", "pads", "value", "edgegan_align", "edgegan_size_scale"});
  auto input = [&](size_t k) -> const Value* {
    if (k >= n.inputs.size() || n.inputs[k].empty()) return nullptr;
    const auto it = values.find(n.inputs[k]);
    return it == values.end() ? nullptr : &it->second;
  };
  PadParams p;
  p.mode = pad_mode(n);
  p.align = attr_int(n, "edgegan_align", 0);
  p.size_scale = attr_int(n, "edgegan_size_scale", 0);
  if (p.align < 0 || p.align > 4096) throw ConvertError(where(n) + ": attribute 'edgegan_align' = " + std::to_string(p.align) + " is out of range (0 to 4096)");
  if (p.size_scale < 0 || p.size_scale > 64)
    throw ConvertError(where(n) + ": attribute 'edgegan_size_scale' = " + std::to_string(p.size_scale) + " is out of range (0 to 64)");
  if ((p.size_scale > 0) != (n.inputs.size() > 4 && !n.inputs[4].empty()))
    throw ConvertError(where(n) + ": attribute 'edgegan_size_scale' needs the size's tensor as input 5, and only it");
  if (p.size_scale > 0 && p.align > 0) throw ConvertError(where(n) + ": 'edgegan_align' and 'edgegan_size_scale' are both set");
  if ((p.align > 0 || p.size_scale > 0) && x.size() != 4) throw ConvertError(where(n) + ": 'edgegan_align' and 'edgegan_size_scale' need an NCHW map");
  if (x.size() != 4 && x.size() != 3)
    throw ConvertError(where(n) + ": input has rank " + std::to_string(x.size()) + "; only NCHW and NCL maps can be padded");
  const int64_t rank = static_cast<int64_t>(x.size());
  std::vector<int64_t> pads;
  if (find_attr(n, "pads")) {  // opsets before 11
    pads = attr_ints(n, "pads", {});
    p.value = attr_float(n, "value", 0.f);
  } else {
    const Value* v = input(1);
    if (!v) throw ConvertError(where(n) + ": input 'pads' is missing");
    pads = as_ints(*v, n, "input 'pads'");
    if (const Value* c = input(2)) {
      if (!c->is_const) throw ConvertError(where(n) + ": input 'constant_value' must be a constant");
      if (c->c.numel() != 1) throw ConvertError(where(n) + ": input 'constant_value' must hold one value");
      p.value = static_cast<float>(c->c.at(0));
      if (!std::isfinite(p.value) && p.mode == schema::PadMode_Constant)
        throw ConvertError(where(n) + ": input 'constant_value' is not finite");
    }
  }
  std::vector<int64_t> axes;
  for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  if (const Value* a = input(3)) {
    axes = as_ints(*a, n, "input 'axes'");
    for (int64_t& axis : axes) {
      if (axis < -rank || axis >= rank) throw ConvertError(where(n) + ": input 'axes' value " + std::to_string(axis) + " is out of range");
      if (axis < 0) axis += rank;
    }
  }
  if (pads.size() != 2 * axes.size())
    throw ConvertError(where(n) + ": input 'pads' has " + std::to_string(pads.size()) + " values, expected " + std::to_string(2 * axes.size()));
  int64_t begin[4] = {0, 0, 0, 0}, end[4] = {0, 0, 0, 0};
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t axis = axes[k];
    if (begin[axis] != 0 || end[axis] != 0) throw ConvertError(where(n) + ": input 'axes' names axis " + std::to_string(axis) + " twice");
    begin[axis] = pads[k];
    end[axis] = pads[k + axes.size()];
  }
  for (int64_t axis : {0, 1})
    if (begin[axis] != 0 || end[axis] != 0)
      throw ConvertError(where(n) + ": input 'pads' pads axis " + std::to_string(axis) + (axis == 0 ? " (batch)" : " (channels)") +
                         (rank == 4 ? "; only H and W (axes 2 and 3) may be padded" : "; only L (axis 2) may be padded"));
  for (int64_t axis = 2; axis < rank; ++axis) {
    if (std::abs(begin[axis]) > 4096 || std::abs(end[axis]) > 4096)
      throw ConvertError(where(n) + ": input 'pads' value is out of range (|pad| <= 4096)");
    if (x[static_cast<size_t>(axis)] + std::min<int64_t>(begin[axis], 0) + std::min<int64_t>(end[axis], 0) < 1)
      throw ConvertError(where(n) + ": input 'pads' crops all of axis " + std::to_string(axis));
  }
  if (rank == 4) {
    p.pads[0] = begin[2];
    p.pads[1] = begin[3];
    p.pads[2] = end[2];
    p.pads[3] = end[3];
  } else {  // an NCL map is stored as the height-1 NHWC map [N, 1, L, C]
    p.pads[1] = begin[2];
    p.pads[3] = end[2];
  }
  return p;
}

class PadLowering final : public OpLowering {
 public:
  std::vector<std::string> onnx_ops() const override { return {"Pad"}; }

  void infer(RuntimeNode& rn) const override {
    const Value& x = rn.runtime_input(0);
    const PadParams p = pad_params(rn.node, rn.values(), x.shape);
    if (x.shape.size() == 3) {
      rn.set_output({x.shape[0], x.shape[1], x.shape[2] + p.pads[1] + p.pads[3]});
      return;
    }
    int64_t h = x.shape[2] + p.pads[0] + p.pads[2], w = x.shape[3] + p.pads[1] + p.pads[3];
    if (p.size_scale > 0) {  // as the engine's pad_geometry resolves it
      const Value& ref = rn.runtime_input(4);
      if (ref.shape.size() != 4) throw ConvertError(where(rn.node) + ": the size's tensor (input 5) is not an NCHW map");
      h = ref.shape[2] * p.size_scale;
      w = ref.shape[3] * p.size_scale;
    } else if (p.align >= 2) {
      h += (p.align - h % p.align) % p.align;
      w += (p.align - w % p.align) % p.align;
    }
    rn.set_output({x.shape[0], x.shape[1], h, w});
  }

  void lower(const Node& n, Lowering& l) const override {
    const Value& x = l.value(n.inputs[0]);
    std::map<std::string, Value> consts;
    for (size_t k = 1; k < n.inputs.size() && k < 4; ++k)
      if (!n.inputs[k].empty()) consts[n.inputs[k]] = l.value(n.inputs[k]);
    const PadParams p = pad_params(n, consts, x.shape);
    std::vector<int> inputs = {l.spatial_tensor(n, 0)};
    if (p.size_scale > 0) inputs.push_back(l.spatial_tensor(n, 4));
    IrOp& o = l.add_op(schema::OpKind_Pad, n, inputs);
    for (int k = 0; k < 4; ++k) o.pads[k] = p.pads[k];
    o.pad_mode = p.mode;
    o.pad_value = p.value;
    o.pad_align = p.align;
    o.pad_size_scale = p.size_scale;
  }

  flatbuffers::Offset<schema::Op> write(const IrModel&, const IrOp& op, EganWriter& w) const override {
    const auto body = schema::CreatePad(w.fbb(), op.inputs[0], op.output, static_cast<schema::PadMode>(op.pad_mode), op.pad_value,
                                        static_cast<int>(op.pads[0]), static_cast<int>(op.pads[1]), static_cast<int>(op.pads[2]),
                                        static_cast<int>(op.pads[3]), static_cast<int>(op.pad_align),
                                        op.pad_size_scale > 0 ? op.inputs[1] : -1, op.pad_size_scale > 0 ? static_cast<int>(op.pad_size_scale) : 1);
    return w.op(op, schema::OpKind_Pad, body.Union());
  }
};

}  // namespace

template <>
const OpLowering& op_lowering<schema::OpKind_Pad>() {
  static const PadLowering lowering;
  return lowering;
}

}  // namespace edgegan::converter
