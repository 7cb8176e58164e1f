// GridSample from ONNX GridSample (opsets 16 and 20) on rank-4 maps: modes bilinear /
// linear, nearest, bicubic / cubic; padding zeros, border, reflection; align_corners.
// ONNX's grid [N, Ho, Wo, 2] is stored as an NHWC tensor of its own axes, so a Transpose
// op in front turns it into the map [N, Ho, Wo, 2] the op reads. The checkpoint
// importer's DySample writes two attributes of its own: edgegan_groups (the grid is then
// the map [N, 2*groups, Ho, Wo], channel k*groups + g coordinate k of channel group g)
// and edgegan_offsets (coordinates in input pixels from each output pixel's source).
// Refused, naming the attribute: other modes and paddings, maps of another rank.
#include "converter/egan_writer.h"
#include "converter/errors.h"
#include "converter/lowering.h"
#include "converter/ops/op_lowering.h"

namespace edgegan::converter {
namespace {

struct GridParams {
  schema::GridSampleMode mode = schema::GridSampleMode_Bilinear;
  schema::GridSamplePadding padding = schema::GridSamplePadding_Zeros;
  bool align_corners = false;
  bool grid_map = false;  // edgegan_groups given: the grid is an NCHW map
  int64_t groups = 1;
  bool offsets = false;
};

GridParams grid_params(const Node& n) {
  check_attributes(n, {"mode", "padding_mode", "align_corners", "edgegan_groups", "edgegan_offsets"});
  GridParams p;
  const std::string mode = attr_string(n, "mode", "bilinear");
  if (mode == "bilinear" || mode == "linear") p.mode = schema::GridSampleMode_Bilinear;
  else if (mode == "nearest") p.mode = schema::GridSampleMode_Nearest;
  else if (mode == "bicubic" || mode == "cubic") p.mode = schema::GridSampleMode_Bicubic;
  else throw ConvertError(where(n) + ": attribute 'mode' = '" + mode + "' is not supported (bilinear, linear, nearest, bicubic, cubic)");
  const std::string padding = attr_string(n, "padding_mode", "zeros");
  if (padding == "zeros") p.padding = schema::GridSamplePadding_Zeros;
  else if (padding == "border") p.padding = schema::GridSamplePadding_Border;
  else if (padding == "reflection") p.padding = schema::GridSamplePadding_Reflection;
  else throw ConvertError(where(n) + ": attribute 'padding_mode' = '" + padding + "' is not supported (zeros, border, reflection)");
  const int64_t align = attr_int(n, "align_corners", 0);
  if (align != 0 && align != 1) throw ConvertError(where(n) + ": attribute 'align_corners' = " + std::to_string(align) + " is not supported (0, 1)");
  p.align_corners = align == 1;
  p.grid_map = find_attr(n, "edgegan_groups") != nullptr;
  p.groups = attr_int(n, "edgegan_groups", 1);
  if (p.groups < 1 || p.groups > (int64_t{1} << 20)) throw ConvertError(where(n) + ": attribute 'edgegan_groups' = " + std::to_string(p.groups) + " is out of range");
  const int64_t offsets = attr_int(n, "edgegan_offsets", 0);
  if (offsets != 0 && offsets != 1) throw ConvertError(where(n) + ": attribute 'edgegan_offsets' = " + std::to_string(offsets) + " is not supported (0, 1)");
  p.offsets = offsets == 1;
  if (p.offsets && !p.grid_map) throw ConvertError(where(n) + ": attribute 'edgegan_offsets' needs 'edgegan_groups'");
  return p;
}

class GridSampleLowering final : public OpLowering {
 public:
  std::vector<std::string> onnx_ops() const override { return {"GridSample"}; }

  void infer(RuntimeNode& rn) const override {
    const Node& n = rn.node;
    const GridParams p = grid_params(n);
    if (n.inputs.size() != 2) throw ConvertError(where(n) + ": expected 2 inputs (X, grid), got " + std::to_string(n.inputs.size()));
    const Value& x = rn.runtime_input(0);
    const Value& grid = rn.runtime_input(1);
    if (x.shape.size() != 4) throw ConvertError(where(n) + ": input 'X' has rank " + std::to_string(x.shape.size()) + "; only rank-4 NCHW maps are supported");
    if (grid.shape.size() != 4) throw ConvertError(where(n) + ": input 'grid' has rank " + std::to_string(grid.shape.size()) + ", not 4");
    if (x.is_int || grid.is_int) throw ConvertError(where(n) + ": inputs must be float tensors");
    for (size_t k = 1; k < 4; ++k)
      if (x.shape[k] < 1 || grid.shape[k] < 1) throw ConvertError(where(n) + ": inputs 'X' and 'grid' must not have empty dimensions");
    if (grid.shape[0] != x.shape[0]) throw ConvertError(where(n) + ": input 'grid' has batch " + std::to_string(grid.shape[0]) + ", 'X' " + std::to_string(x.shape[0]));
    if (p.grid_map) {
      if (grid.shape[1] != 2 * p.groups) throw ConvertError(where(n) + ": input 'grid' has " + std::to_string(grid.shape[1]) + " channels, not 2 x edgegan_groups");
      if (x.shape[1] % p.groups) throw ConvertError(where(n) + ": input 'X' has " + std::to_string(x.shape[1]) + " channels, not a multiple of edgegan_groups");
      if (p.offsets && (grid.shape[2] % x.shape[2] || grid.shape[3] % x.shape[3] || grid.shape[2] / x.shape[2] != grid.shape[3] / x.shape[3]))
        throw ConvertError(where(n) + ": with edgegan_offsets the grid's map must be X's times one whole scale");
      rn.set_output({x.shape[0], x.shape[1], grid.shape[2], grid.shape[3]});
      return;
    }
    if (grid.shape[3] != 2) throw ConvertError(where(n) + ": input 'grid' has last dimension " + std::to_string(grid.shape[3]) + ", not 2 (x, y)");
    rn.set_output({x.shape[0], x.shape[1], grid.shape[1], grid.shape[2]});
  }

  void lower(const Node& n, Lowering& l) const override {
    const GridParams p = grid_params(n);
    int grid = l.tensor(n, 1);
    if (!p.grid_map) {
      // ONNX's [N, Ho, Wo, 2] is stored [N, Wo, 2, Ho]: into the map [N, Ho, Wo, 2].
      const std::vector<int64_t> g = l.value(n.inputs[1]).shape;
      IrOp& t = l.add_op_with_new_tensor(schema::OpKind_Transpose, n, {grid}, n.outputs[0] + ":grid", {g[0], 2, g[1], g[2]});
      t.name = n.name + ":grid";
      t.perm = {0, 3, 1, 2};
      grid = t.output;
    }
    IrOp& o = l.add_op(schema::OpKind_GridSample, n, {l.tensor(n, 0), grid});
    o.grid_mode = p.mode;
    o.grid_padding = p.padding;
    o.align_corners = p.align_corners;
    o.grid_groups = p.groups;
    o.grid_offsets = p.offsets;
  }

  flatbuffers::Offset<schema::Op> write(const IrModel&, const IrOp& op, EganWriter& w) const override {
    const auto body = schema::CreateGridSample(w.fbb(), op.inputs[0], op.inputs[1], op.output, static_cast<schema::GridSampleMode>(op.grid_mode),
                                               static_cast<schema::GridSamplePadding>(op.grid_padding), op.align_corners,
                                               static_cast<int>(op.grid_groups), op.grid_offsets);
    return w.op(op, schema::OpKind_GridSample, body.Union());
  }
};

}  // namespace

template <>
const OpLowering& op_lowering<schema::OpKind_GridSample>() {
  static const GridSampleLowering lowering;
  return lowering;
}

}  // namespace edgegan::converter
