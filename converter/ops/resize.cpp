// Resize from ONNX Resize (opsets 11, 13, 18, 19) of an NCHW map along H and W: modes
// nearest (every nearest_mode), linear, cubic (cubic_coeff_a, exclude_outside); the
// coordinate transforms half_pixel, pytorch_half_pixel, align_corners, asymmetric,
// half_pixel_symmetric, tf_half_pixel_for_nn; constant scales or sizes, opset 18's
// axes and keep_aspect_ratio_policy "stretch". Refused, naming the attribute:
// tf_crop_and_resize, antialias = 1, the other aspect-ratio policies, resizing N or C.
#include <cmath>

#include "converter/egan_writer.h"
#include "converter/errors.h"
#include "converter/lowering.h"
#include "converter/ops/op_lowering.h"

namespace edgegan::converter {
namespace {

struct ResizeParams {
  schema::ResizeMode mode = schema::ResizeMode_Nearest;
  schema::ResizeCoordinates coordinates = schema::ResizeCoordinates_HalfPixel;
  schema::ResizeNearest nearest = schema::ResizeNearest_RoundPreferFloor;
  float cubic_coeff_a = -0.75f;
  bool exclude_outside = false;
  float scale_h = 0.f, scale_w = 0.f;  // 0: from sizes
  int64_t out_h = 1, out_w = 1;
};

const Value* optional_input(const Node& n, const std::map<std::string, Value>& values, size_t k) {
  if (k >= n.inputs.size() || n.inputs[k].empty()) return nullptr;
  const auto it = values.find(n.inputs[k]);
  return it == values.end() ? nullptr : &it->second;
}

ResizeParams resize_params(const Node& n, const std::map<std::string, Value>& values, const std::vector<int64_t>& x) {
  check_attributes(n, {"mode", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside",
                       "extrapolation_value", "antialias", "axes", "keep_aspect_ratio_policy"});
  ResizeParams p;
  const std::string mode = attr_string(n, "mode", "nearest");
  if (mode == "nearest") p.mode = schema::ResizeMode_Nearest;
  else if (mode == "linear") p.mode = schema::ResizeMode_Linear;
  else if (mode == "cubic") p.mode = schema::ResizeMode_Cubic;
  else throw ConvertError(where(n) + ": attribute 'mode' = '" + mode + "' is not supported (nearest, linear, cubic)");
  const std::string coords = attr_string(n, "coordinate_transformation_mode", "half_pixel");
  if (coords == "half_pixel") p.coordinates = schema::ResizeCoordinates_HalfPixel;
  else if (coords == "pytorch_half_pixel") p.coordinates = schema::ResizeCoordinates_PytorchHalfPixel;
  else if (coords == "align_corners") p.coordinates = schema::ResizeCoordinates_AlignCorners;
  else if (coords == "asymmetric") p.coordinates = schema::ResizeCoordinates_Asymmetric;
  else if (coords == "half_pixel_symmetric") p.coordinates = schema::ResizeCoordinates_HalfPixelSymmetric;
  else if (coords == "tf_half_pixel_for_nn") p.coordinates = schema::ResizeCoordinates_TfHalfPixelForNn;
  else throw ConvertError(where(n) + ": attribute 'coordinate_transformation_mode' = '" + coords + "' is not supported");
  const std::string nearest = attr_string(n, "nearest_mode", "round_prefer_floor");
  if (nearest == "round_prefer_floor") p.nearest = schema::ResizeNearest_RoundPreferFloor;
  else if (nearest == "round_prefer_ceil") p.nearest = schema::ResizeNearest_RoundPreferCeil;
  else if (nearest == "floor") p.nearest = schema::ResizeNearest_Floor;
  else if (nearest == "ceil") p.nearest = schema::ResizeNearest_Ceil;
  else throw ConvertError(where(n) + ": attribute 'nearest_mode' = '" + nearest + "' is not supported");
  p.cubic_coeff_a = attr_float(n, "cubic_coeff_a", -0.75f);
  if (!std::isfinite(p.cubic_coeff_a) || std::abs(p.cubic_coeff_a) > 16.f)
    throw ConvertError(where(n) + ": attribute 'cubic_coeff_a' is out of range");
  const int64_t exclude = attr_int(n, "exclude_outside", 0);
  if (exclude != 0 && exclude != 1) throw ConvertError(where(n) + ": attribute 'exclude_outside' = " + std::to_string(exclude) + " is not supported");
  p.exclude_outside = exclude == 1;
  if (const int64_t antialias = attr_int(n, "antialias", 0); antialias != 0)
    throw ConvertError(where(n) + ": attribute 'antialias' = " + std::to_string(antialias) + " is not supported (only 0)");
  if (const std::string policy = attr_string(n, "keep_aspect_ratio_policy", "stretch"); policy != "stretch")
    throw ConvertError(where(n) + ": attribute 'keep_aspect_ratio_policy' = '" + policy + "' is not supported (only stretch)");
  if (x.size() != 4) throw ConvertError(where(n) + ": input has rank " + std::to_string(x.size()) + "; only rank-4 NCHW maps can be resized");

  const int64_t rank = 4;
  std::vector<int64_t> axes = attr_ints(n, "axes", {0, 1, 2, 3});
  std::vector<bool> named(4, false);
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank) throw ConvertError(where(n) + ": attribute 'axes' value " + std::to_string(a) + " is out of range");
    if (a < 0) a += rank;
    if (named[static_cast<size_t>(a)]) throw ConvertError(where(n) + ": attribute 'axes' names axis " + std::to_string(a) + " twice");
    named[static_cast<size_t>(a)] = true;
  }
  // Scales (input 2) when given and non-empty, else sizes (input 3); both constants.
  double scale[4] = {1, 1, 1, 1};
  int64_t out[4] = {x[0], x[1], x[2], x[3]};
  bool from_sizes = false;
  const Value* scales = optional_input(n, values, 2);
  if (scales && (!scales->is_const || scales->c.is_int)) throw ConvertError(where(n) + ": input 'scales' must be a constant float tensor");
  if (scales && scales->c.numel() > 0) {
    if (scales->c.numel() != static_cast<int64_t>(axes.size()))
      throw ConvertError(where(n) + ": input 'scales' has " + std::to_string(scales->c.numel()) + " values, expected " + std::to_string(axes.size()));
    for (size_t k = 0; k < axes.size(); ++k) {
      const size_t a = static_cast<size_t>(axes[k]);
      scale[a] = static_cast<float>(scales->c.at(static_cast<int64_t>(k)));
      if (!std::isfinite(scale[a]) || scale[a] < 1e-4 || scale[a] > 1e4)
        throw ConvertError(where(n) + ": input 'scales' value " + std::to_string(scale[a]) + " is not supported (1e-4..1e4)");
      out[a] = static_cast<int64_t>(std::floor(static_cast<double>(x[a]) * scale[a]));
    }
  } else {
    const Value* sizes = optional_input(n, values, 3);
    if (!sizes) throw ConvertError(where(n) + ": neither input 'scales' nor input 'sizes' is given");
    const std::vector<int64_t> v = as_ints(*sizes, n, "input 'sizes'");
    if (v.size() != axes.size())
      throw ConvertError(where(n) + ": input 'sizes' has " + std::to_string(v.size()) + " values, expected " + std::to_string(axes.size()));
    from_sizes = true;
    for (size_t k = 0; k < axes.size(); ++k) out[static_cast<size_t>(axes[k])] = v[k];
  }
  for (size_t a : {size_t{0}, size_t{1}})
    if (from_sizes && out[a] != x[a])
      throw ConvertError(where(n) + ": input 'sizes' sets axis " + std::to_string(a) + (a == 0 ? " (batch)" : " (channels)") + " to " +
                         std::to_string(out[a]) + " for an input of " + std::to_string(x[a]) +
                         "; only H and W (axes 2 and 3) may change size (and the batch must come from Shape, as torch writes it)");
    else if (out[a] != x[a] || (!from_sizes && scale[a] != 1.0))
      throw ConvertError(where(n) + ": input '" + std::string(from_sizes ? "sizes" : "scales") + "' resizes axis " + std::to_string(a) +
                         (a == 0 ? " (batch)" : " (channels)") + "; only H and W (axes 2 and 3) may change size");
  for (size_t a : {size_t{2}, size_t{3}})
    if (out[a] < 1 || out[a] > (int64_t{1} << 20) || x[a] > (int64_t{1} << 20))
      throw ConvertError(where(n) + ": output size " + std::to_string(out[a]) + " along axis " + std::to_string(a) + " is out of range (1..2^20)");
  // The transforms divide by the model's scales; given sizes, by output/input (stored as 0).
  p.scale_h = from_sizes ? 0.f : static_cast<float>(scale[2]);
  p.scale_w = from_sizes ? 0.f : static_cast<float>(scale[3]);
  p.out_h = out[2];
  p.out_w = out[3];
  return p;
}

class ResizeLowering final : public OpLowering {
 public:
  std::vector<std::string> onnx_ops() const override { return {"Resize"}; }

  void infer(RuntimeNode& rn) const override {
    const Node& n = rn.node;
    const Value& x = rn.runtime_input(0);
    const ResizeParams p = resize_params(n, rn.values(), x.shape);
    rn.set_output({x.shape[0], x.shape[1], p.out_h, p.out_w});
  }

  void lower(const Node& n, Lowering& l) const override {
    const Value& x = l.value(n.inputs[0]);
    std::map<std::string, Value> consts;
    for (size_t k = 1; k < n.inputs.size(); ++k)
      if (!n.inputs[k].empty()) consts[n.inputs[k]] = l.value(n.inputs[k]);
    const ResizeParams p = resize_params(n, consts, x.shape);
    IrOp& o = l.add_op(schema::OpKind_Resize, n, {l.tensor(n, 0)});
    o.resize_mode = p.mode;
    o.resize_coordinates = p.coordinates;
    o.resize_nearest = p.nearest;
    o.cubic_coeff_a = p.cubic_coeff_a;
    o.exclude_outside = p.exclude_outside;
    o.scale_h = p.scale_h;
    o.scale_w = p.scale_w;
  }

  flatbuffers::Offset<schema::Op> write(const IrModel&, const IrOp& op, EganWriter& w) const override {
    const auto body = schema::CreateResize(w.fbb(), op.inputs[0], op.output, static_cast<schema::ResizeMode>(op.resize_mode),
                                           static_cast<schema::ResizeCoordinates>(op.resize_coordinates),
                                           static_cast<schema::ResizeNearest>(op.resize_nearest), op.cubic_coeff_a, op.exclude_outside,
                                           op.scale_h, op.scale_w);
    return w.op(op, schema::OpKind_Resize, body.Union());
  }
};

}  // namespace

template <>
const OpLowering& op_lowering<schema::OpKind_Resize>() {
  static const ResizeLowering lowering;
  return lowering;
}

}  // namespace edgegan::converter
