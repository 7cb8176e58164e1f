// Pool from ONNX AveragePool, MaxPool, GlobalAveragePool and GlobalMaxPool of a map
// ([N, C, H, W], or [N, C, L] as a map of height 1). Refused: an average's dilations
// other than 1, MaxPool's storage_order 1 and Indices output, ranks other than 3 and 4.
#include <algorithm>

#include "converter/egan_writer.h"
#include "converter/errors.h"
#include "converter/lowering.h"
#include "converter/ops/op_lowering.h"
#include "kernels_cpu/pool/pool.h"

namespace edgegan::converter {
namespace {

// The window, strides and pads of a pool node on input shape x, as a 2-D geometry.
ConvGeometry pool_geometry(const Node& n, const std::vector<int64_t>& x) {
  const auto map = spatial_map(x);
  if (!map) throw ConvertError(where(n) + ": input must be a 4-D NCHW or 3-D NCL map, got rank " + std::to_string(x.size()));
  ConvGeometry g;
  g.in_channels = g.out_channels = map->c;
  const bool global = n.op == "GlobalAveragePool" || n.op == "GlobalMaxPool";
  if (global) {
    check_attributes(n, {});
    g.kernel_h = map->h;
    g.kernel_w = map->w;
    g.out_h = g.out_w = 1;
    return g;
  }
  if (n.op == "AveragePool") check_attributes(n, {"auto_pad", "ceil_mode", "count_include_pad", "dilations", "kernel_shape", "pads", "strides"});
  else check_attributes(n, {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"});
  const size_t spatial = x.size() - 2;
  // 1-D lists name the width only; the height is then 1 (kernel 1, stride 1, no pads).
  auto per_axis = [&](const char* name, int64_t fallback, int64_t lo, int64_t hi) {
    std::vector<int64_t> v = attr_ints(n, name, std::vector<int64_t>(spatial, fallback));
    if (v.size() != spatial)
      throw ConvertError(where(n) + ": attribute '" + name + "' must have " + std::to_string(spatial) + " values, got " + std::to_string(v.size()));
    for (int64_t e : v)
      if (e < lo || e > hi) throw ConvertError(where(n) + ": attribute '" + name + "' value " + std::to_string(e) + " is out of range");
    if (spatial == 1) v.insert(v.begin(), 1);
    return v;
  };
  if (!find_attr(n, "kernel_shape")) throw ConvertError(where(n) + ": attribute 'kernel_shape' is required");
  const auto k = per_axis("kernel_shape", 1, 1, 1 << 20), s = per_axis("strides", 1, 1, 64), d = per_axis("dilations", 1, 1, 64);
  if (n.op == "AveragePool" && (d[0] != 1 || d[1] != 1)) throw ConvertError(where(n) + ": attribute 'dilations' other than 1 is not supported");
  if (attr_int(n, "storage_order", 0) != 0) throw ConvertError(where(n) + ": attribute 'storage_order' = 1 is not supported");
  const int64_t ceil = attr_int(n, "ceil_mode", 0);
  if (ceil != 0 && ceil != 1) throw ConvertError(where(n) + ": attribute 'ceil_mode' = " + std::to_string(ceil) + " is not supported");
  const int64_t include = attr_int(n, "count_include_pad", 0);
  if (include != 0 && include != 1) throw ConvertError(where(n) + ": attribute 'count_include_pad' = " + std::to_string(include) + " is not supported");
  const std::string auto_pad = attr_string(n, "auto_pad", "NOTSET");
  std::vector<int64_t> pads(2 * spatial, 0);
  if (auto_pad == "NOTSET") {
    pads = attr_ints(n, "pads", pads);
    if (pads.size() != 2 * spatial)
      throw ConvertError(where(n) + ": attribute 'pads' must have " + std::to_string(2 * spatial) + " values, got " + std::to_string(pads.size()));
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    // ONNX: output = ceil(in / stride), the total padding that needs split in two, the
    // odd unit at the end (SAME_UPPER) or the beginning (SAME_LOWER).
    if (find_attr(n, "pads")) throw ConvertError(where(n) + ": attributes 'pads' and 'auto_pad' = " + auto_pad + " are mutually exclusive");
    const int64_t in[2] = {map->h, map->w};
    for (size_t a = 0; a < 2; ++a) {
      if (spatial == 1 && a == 0) continue;
      const size_t i = spatial == 1 ? 0 : a;  // index into the ONNX lists (width only for 1-D)
      const int64_t out = (in[a] + s[a] - 1) / s[a];
      const int64_t total = std::max<int64_t>(0, (out - 1) * s[a] + d[a] * (k[a] - 1) + 1 - in[a]);
      const int64_t small = total / 2, large = total - small;
      pads[i] = auto_pad == "SAME_UPPER" ? small : large;
      pads[i + spatial] = auto_pad == "SAME_UPPER" ? large : small;
    }
  } else if (auto_pad != "VALID") {
    throw ConvertError(where(n) + ": attribute 'auto_pad' = '" + auto_pad + "' is not supported");
  }
  if (spatial == 1) pads = {0, pads[0], 0, pads[1]};
  g.kernel_h = k[0];
  g.kernel_w = k[1];
  g.stride_h = s[0];
  g.stride_w = s[1];
  g.dilation_h = d[0];
  g.dilation_w = d[1];
  g.pad_top = pads[0];
  g.pad_left = pads[1];
  g.pad_bottom = pads[2];
  g.pad_right = pads[3];
  const int64_t extent[2] = {d[0] * (k[0] - 1) + 1, d[1] * (k[1] - 1) + 1};
  for (size_t i = 0; i < 4; ++i)
    if (pads[i] < 0 || pads[i] >= extent[i % 2])
      throw ConvertError(where(n) + ": attribute 'pads' value " + std::to_string(pads[i]) + " is not supported (must be smaller than the window)");
  g.out_h = cpu::pool_output_length(map->h, k[0], s[0], d[0], pads[0], pads[2], ceil != 0);
  g.out_w = cpu::pool_output_length(map->w, k[1], s[1], d[1], pads[1], pads[3], ceil != 0);
  if (g.out_h < 1 || g.out_w < 1) throw ConvertError(where(n) + ": the window is larger than the padded input");
  return g;
}

class PoolLowering final : public OpLowering {
 public:
  std::vector<std::string> onnx_ops() const override { return {"AveragePool", "MaxPool", "GlobalAveragePool", "GlobalMaxPool"}; }

  void infer(RuntimeNode& rn) const override {
    const Node& n = rn.node;
    const Value& x = rn.runtime_input(0);
    if (x.is_int) throw ConvertError(where(n) + ": input must be a float tensor");
    for (size_t k = 1; k < n.outputs.size(); ++k)
      if (!n.outputs[k].empty()) throw ConvertError(where(n) + ": output 'Indices' is not supported");
    const ConvGeometry g = pool_geometry(n, x.shape);
    if (x.shape.size() == 3) rn.set_output({rn.batch(), g.out_channels, g.out_w});
    else rn.set_output({rn.batch(), g.out_channels, g.out_h, g.out_w});
  }

  void lower(const Node& n, Lowering& l) const override {
    const Value& x = l.value(n.inputs[0]);
    const int input = l.spatial_tensor(n, 0);
    IrOp& o = l.add_op(schema::OpKind_Pool, n, {input});
    o.geometry = pool_geometry(n, x.shape);
    o.pool_kind = n.op == "MaxPool" || n.op == "GlobalMaxPool" ? schema::PoolKind_Max : schema::PoolKind_Average;
    o.ceil_mode = n.op == "AveragePool" || n.op == "MaxPool" ? attr_int(n, "ceil_mode", 0) != 0 : false;
    o.count_include_pad = n.op == "AveragePool" && attr_int(n, "count_include_pad", 0) != 0;
  }

  flatbuffers::Offset<schema::Op> write(const IrModel&, const IrOp& op, EganWriter& w) const override {
    const ConvGeometry& g = op.geometry;
    const auto body = schema::CreatePool(w.fbb(), op.inputs[0], op.output, op.pool_kind, static_cast<int>(g.in_channels), static_cast<int>(g.kernel_h),
                                         static_cast<int>(g.kernel_w), static_cast<int>(g.stride_h), static_cast<int>(g.stride_w),
                                         static_cast<int>(g.dilation_h), static_cast<int>(g.dilation_w), static_cast<int>(g.pad_top),
                                         static_cast<int>(g.pad_left), static_cast<int>(g.pad_bottom), static_cast<int>(g.pad_right), op.ceil_mode,
                                         op.count_include_pad);
    return w.op(op, schema::OpKind_Pool, body.Union());
  }
};

}  // namespace

template <>
const OpLowering& op_lowering<schema::OpKind_Pool>() {
  static const PoolLowering lowering;
  return lowering;
}

}  // namespace edgegan::converter
