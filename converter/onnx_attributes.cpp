#include <algorithm>
#include <sstream>

#include "converter/errors.h"
#include "converter/onnx_graph.h"

namespace edgegan::converter {

std::string where(const Node& n) { return "node '" + n.name + "' (" + n.op + ")"; }

const onnx::AttributeProto* find_attr(const Node& n, const std::string& name) {
  for (const auto& a : n.proto->attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t attr_int(const Node& n, const std::string& name, int64_t fallback) {
  const auto* a = find_attr(n, name);
  if (!a) return fallback;
  if (a->type() != onnx::AttributeProto::INT) throw ConvertError(where(n) + ": attribute '" + name + "' must be an int");
  return a->i();
}

float attr_float(const Node& n, const std::string& name, float fallback) {
  const auto* a = find_attr(n, name);
  if (!a) return fallback;
  if (a->type() != onnx::AttributeProto::FLOAT) throw ConvertError(where(n) + ": attribute '" + name + "' must be a float");
  return a->f();
}

std::string attr_string(const Node& n, const std::string& name, const std::string& fallback) {
  const auto* a = find_attr(n, name);
  if (!a) return fallback;
  if (a->type() != onnx::AttributeProto::STRING) throw ConvertError(where(n) + ": attribute '" + name + "' must be a string");
  return a->s();
}

std::vector<int64_t> attr_ints(const Node& n, const std::string& name, std::vector<int64_t> fallback) {
  const auto* a = find_attr(n, name);
  if (!a) return fallback;
  if (a->type() != onnx::AttributeProto::INTS) throw ConvertError(where(n) + ": attribute '" + name + "' must be a list of ints");
  return {a->ints().begin(), a->ints().end()};
}

void check_attributes(const Node& n, std::initializer_list<const char*> supported) {
  for (const auto& a : n.proto->attribute())
    if (std::none_of(supported.begin(), supported.end(), [&](const char* s) { return a.name() == s; }))
      throw ConvertError(where(n) + ": attribute '" + a.name() + "' is not supported");
}

namespace {

// A 1-D convolution (input [N, C, L]) runs as a 2-D one of height 1: its attributes
// list the width's values only, and become 2-D lists here (height: kernel 1, stride 1,
// dilation 1, no padding).
std::vector<int64_t> conv_ints(const Node& n, const std::string& name, std::vector<int64_t> fallback, bool one_d) {
  const auto* a = find_attr(n, name);
  if (!a || !one_d) return attr_ints(n, name, std::move(fallback));
  const std::vector<int64_t> v = attr_ints(n, name, {});
  if (name == "pads") {
    if (v.size() != 2) throw ConvertError(where(n) + ": attribute 'pads' must have 2 values (1-D convolution), got " + std::to_string(v.size()));
    return {0, v[0], 0, v[1]};
  }
  if (name == "output_shape" && v.size() == 3) return {1, v[2]};
  if (v.size() != 1) throw ConvertError(where(n) + ": attribute '" + name + "' must have 1 value (1-D convolution), got " + std::to_string(v.size()));
  return {name == "output_padding" ? 0 : 1, v[0]};
}

std::vector<int64_t> pair_attr(const Node& n, const std::string& name, int64_t fallback, int64_t lo, bool one_d) {
  std::vector<int64_t> v = conv_ints(n, name, {fallback, fallback}, one_d);
  if (v.size() != 2) throw ConvertError(where(n) + ": attribute '" + name + "' must have 2 values (2-D convolution), got " + std::to_string(v.size()));
  for (int64_t x : v)
    if (x < lo || x > 4096) throw ConvertError(where(n) + ": attribute '" + name + "' value " + std::to_string(x) + " is out of range");
  return v;
}

void common_conv_checks(const Node& n, const std::vector<int64_t>& x, const std::vector<int64_t>& w, ConvGeometry& g, bool one_d) {
  if (x.size() != 4) throw ConvertError(where(n) + ": input must be 3-D NCL or 4-D NCHW (1-D or 2-D convolution), got rank " + std::to_string(x.size()));
  if (w.size() != 4) throw ConvertError(where(n) + ": weights must have the input's rank");
  const auto ks = conv_ints(n, "kernel_shape", {w[2], w[3]}, one_d);
  if (ks.size() != 2 || ks[0] != w[2] || ks[1] != w[3]) throw ConvertError(where(n) + ": attribute 'kernel_shape' does not match the weights");
  g.kernel_h = w[2];
  g.kernel_w = w[3];
  const auto s = pair_attr(n, "strides", 1, 1, one_d), d = pair_attr(n, "dilations", 1, 1, one_d);
  g.stride_h = s[0];
  g.stride_w = s[1];
  g.dilation_h = d[0];
  g.dilation_w = d[1];
}

std::vector<int64_t> pads_attr(const Node& n, bool one_d) {
  std::vector<int64_t> p = conv_ints(n, "pads", {0, 0, 0, 0}, one_d);
  if (p.size() != 4) throw ConvertError(where(n) + ": attribute 'pads' must have 4 values, got " + std::to_string(p.size()));
  for (int64_t v : p)
    if (v < 0 || v > 4096) throw ConvertError(where(n) + ": attribute 'pads' value " + std::to_string(v) + " is out of range");
  return p;
}

// A rank-3 input and weights as rank 4 with height 1 ([N, C, L] -> [N, C, 1, L]); false when not rank 3.
bool as_2d(const Node& n, std::vector<int64_t>& x, std::vector<int64_t>& w) {
  if (x.size() != 3) return false;
  if (w.size() != 3) throw ConvertError(where(n) + ": weights must have the input's rank (3 for a 1-D convolution)");
  x.insert(x.begin() + 2, 1);
  w.insert(w.begin() + 2, 1);
  return true;
}

}  // namespace

ConvGeometry resolve_conv_transpose(const Node& n, std::vector<int64_t> x, std::vector<int64_t> w) {
  check_attributes(n, {"auto_pad", "dilations", "group", "kernel_shape", "output_padding", "output_shape", "pads", "strides"});
  ConvGeometry g;
  const bool one_d = as_2d(n, x, w);
  common_conv_checks(n, x, w, g, one_d);
  // Grouped: weights [Cin][Cout/group][kh][kw]; group divides the input channels.
  const int64_t group = attr_int(n, "group", 1);
  if (group < 1 || group > x[1] || x[1] % group != 0)
    throw ConvertError(where(n) + ": attribute 'group' = " + std::to_string(group) + " must be positive and divide the input channels (" +
                       std::to_string(x[1]) + ")");
  if (w[0] != x[1]) throw ConvertError(where(n) + ": input has " + std::to_string(x[1]) + " channels, the weights expect " + std::to_string(w[0]));
  g.groups = group;
  g.in_channels = w[0];
  g.out_channels = w[1] * group;
  const auto op = conv_ints(n, "output_padding", {0, 0}, one_d);
  if (op.size() != 2) throw ConvertError(where(n) + ": attribute 'output_padding' must have 2 values");
  const std::string auto_pad = attr_string(n, "auto_pad", "NOTSET");
  std::vector<int64_t> out_shape = conv_ints(n, "output_shape", {}, one_d);
  if (out_shape.size() == 4) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
  if (!out_shape.empty() && out_shape.size() != 2) throw ConvertError(where(n) + ": attribute 'output_shape' must have 2 spatial values");
  const int64_t in[2] = {x[2], x[3]}, k[2] = {g.kernel_h, g.kernel_w}, s[2] = {g.stride_h, g.stride_w}, d[2] = {g.dilation_h, g.dilation_w};
  int64_t begin[2], end[2], out[2];
  for (int a = 0; a < 2; ++a) {
    if (op[static_cast<size_t>(a)] < 0 || op[static_cast<size_t>(a)] >= std::max(s[a], d[a]))
      throw ConvertError(where(n) + ": attribute 'output_padding' value " + std::to_string(op[static_cast<size_t>(a)]) + " must be smaller than the stride or the dilation");
  }
  if (auto_pad == "NOTSET" && out_shape.empty()) {
    const auto p = pads_attr(n, one_d);
    begin[0] = p[0]; begin[1] = p[1]; end[0] = p[2]; end[1] = p[3];
  } else if (auto_pad == "VALID" && out_shape.empty()) {
    begin[0] = begin[1] = end[0] = end[1] = 0;
  } else if (auto_pad == "NOTSET" || auto_pad == "VALID" || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    // ONNX: total_padding = stride*(in-1) + output_padding + ((k-1)*dilation + 1) - output_shape;
    // SAME_UPPER puts the odd unit at the end, SAME_LOWER and explicit output_shape at the beginning.
    // auto_pad SAME_* without output_shape means output_shape = in * stride.
    if (find_attr(n, "pads") && auto_pad != "NOTSET") throw ConvertError(where(n) + ": attributes 'pads' and 'auto_pad' = " + auto_pad + " are mutually exclusive");
    for (int a = 0; a < 2; ++a) {
      const int64_t target = out_shape.empty() ? in[a] * s[a] : out_shape[static_cast<size_t>(a)];
      if (target < 1) throw ConvertError(where(n) + ": attribute 'output_shape' must be positive");
      const int64_t total = s[a] * (in[a] - 1) + op[static_cast<size_t>(a)] + (k[a] - 1) * d[a] + 1 - target;
      // Floor division, as in the ONNX reference implementation (total may be negative).
      const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      if (auto_pad == "SAME_UPPER") { begin[a] = half; end[a] = total - half; }
      else { begin[a] = total - half; end[a] = half; }
    }
  } else {
    throw ConvertError(where(n) + ": attribute 'auto_pad' = '" + auto_pad + "' is not supported");
  }
  g.pad_top = begin[0]; g.pad_left = begin[1]; g.pad_bottom = end[0]; g.pad_right = end[1];
  for (int a = 0; a < 2; ++a) {
    out[a] = (in[a] - 1) * s[a] - begin[a] - end[a] + d[a] * (k[a] - 1) + op[static_cast<size_t>(a)] + 1;
    if (out[a] < 1) throw ConvertError(where(n) + ": the padding leaves no output (length " + std::to_string(out[a]) + ")");
  }
  g.out_h = out[0];
  g.out_w = out[1];
  return g;
}

ConvGeometry resolve_conv(const Node& n, std::vector<int64_t> x, std::vector<int64_t> w) {
  check_attributes(n, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
  ConvGeometry g;
  const bool one_d = as_2d(n, x, w);
  common_conv_checks(n, x, w, g, one_d);
  // Grouped: weights [Cout][Cin/group][kh][kw]; group divides both channel counts.
  const int64_t group = attr_int(n, "group", 1);
  if (group < 1 || group > x[1] || x[1] % group != 0 || w[0] % group != 0)
    throw ConvertError(where(n) + ": attribute 'group' = " + std::to_string(group) + " must be positive and divide the input channels (" +
                       std::to_string(x[1]) + ") and output channels (" + std::to_string(w[0]) + ")");
  if (w[1] * group != x[1])
    throw ConvertError(where(n) + ": input has " + std::to_string(x[1]) + " channels, the weights expect " + std::to_string(w[1] * group) +
                       (group != 1 ? " (" + std::to_string(w[1]) + " per group x " + std::to_string(group) + " groups)" : std::string()));
  g.groups = group;
  g.in_channels = x[1];
  g.out_channels = w[0];
  const std::string auto_pad = attr_string(n, "auto_pad", "NOTSET");
  const int64_t in[2] = {x[2], x[3]}, k[2] = {g.kernel_h, g.kernel_w}, s[2] = {g.stride_h, g.stride_w}, d[2] = {g.dilation_h, g.dilation_w};
  int64_t begin[2] = {0, 0}, end[2] = {0, 0};
  if (auto_pad == "NOTSET") {
    const auto p = pads_attr(n, one_d);
    begin[0] = p[0]; begin[1] = p[1]; end[0] = p[2]; end[1] = p[3];
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (int a = 0; a < 2; ++a) {
      const int64_t out = (in[a] + s[a] - 1) / s[a];
      const int64_t total = std::max<int64_t>(0, (out - 1) * s[a] + (k[a] - 1) * d[a] + 1 - in[a]);
      if (auto_pad == "SAME_UPPER") { begin[a] = total / 2; end[a] = total - total / 2; }
      else { begin[a] = total - total / 2; end[a] = total / 2; }
    }
  } else if (auto_pad != "VALID") {
    throw ConvertError(where(n) + ": attribute 'auto_pad' = '" + auto_pad + "' is not supported");
  }
  g.pad_top = begin[0]; g.pad_left = begin[1]; g.pad_bottom = end[0]; g.pad_right = end[1];
  int64_t out[2];
  for (int a = 0; a < 2; ++a) {
    const int64_t span = in[a] + begin[a] + end[a] - d[a] * (k[a] - 1) - 1;
    if (span < 0) throw ConvertError(where(n) + ": the kernel is larger than the padded input");
    out[a] = span / s[a] + 1;
  }
  g.out_h = out[0];
  g.out_w = out[1];
  return g;
}

}  // namespace edgegan::converter
