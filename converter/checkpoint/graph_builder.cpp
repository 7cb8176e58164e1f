#include "converter/checkpoint/graph_builder.h"

#include "converter/errors.h"

namespace edgegan::converter::checkpoint {
namespace {

void attr_int(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
void attr_ints(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
void attr_float(onnx::NodeProto& n, const std::string& name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}
void attr_string(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

}  // namespace

GraphBuilder::GraphBuilder() {
  model_.set_ir_version(8);
  model_.set_producer_name("edgegan-convert checkpoint import");
  auto* op = model_.add_opset_import();
  op->set_domain("");
  op->set_version(13);
  model_.mutable_graph()->set_name("checkpoint");
}

std::string GraphBuilder::fresh(const std::string& stem) { return stem + "_" + std::to_string(counter_++); }

onnx::NodeProto& GraphBuilder::node(const std::string& op, std::vector<std::string> inputs, const std::string& name) {
  auto* n = model_.mutable_graph()->add_node();
  n->set_op_type(op);
  n->set_name(name.empty() ? fresh(op) : name);
  for (auto& i : inputs) n->add_input(i);
  n->add_output(fresh(n->name()));
  return *n;
}

std::string GraphBuilder::floats(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& values) {
  auto* t = model_.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  return name;
}

std::string GraphBuilder::ints(const std::vector<int64_t>& values) {
  auto* t = model_.mutable_graph()->add_initializer();
  t->set_name(fresh("shape"));
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
  return t->name();
}

std::string GraphBuilder::input(const std::string& name, int64_t channels, int64_t height, int64_t width) {
  auto* v = model_.mutable_graph()->add_input();
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  t->mutable_shape()->add_dim()->set_dim_param("N");
  for (int64_t d : {channels, height, width}) t->mutable_shape()->add_dim()->set_dim_value(d);
  return name;
}

void GraphBuilder::output(const std::string& value) {
  auto& n = node("Identity", {value}, "output");
  n.set_output(0, "output");
  model_.mutable_graph()->add_output()->set_name("output");
}

std::string GraphBuilder::conv(const std::string& x, const std::string& name, const TensorData& w, const TensorData* b, float scale) {
  if (w.shape.size() != 4 || w.shape[2] != w.shape[3] || w.shape[2] % 2 == 0)
    throw ConvertError("'" + name + ".weight' is not a square odd-sized convolution kernel");
  std::vector<float> wv = w.values;
  for (float& v : wv) v *= scale;
  std::vector<std::string> in = {x, floats(name + ".weight", w.shape, wv)};
  if (b) {
    if (b->shape != std::vector<int64_t>{w.shape[0]}) throw ConvertError("'" + name + ".bias' does not match its weight's " + std::to_string(w.shape[0]) + " outputs");
    std::vector<float> bv = b->values;
    for (float& v : bv) v *= scale;
    in.push_back(floats(name + ".bias", b->shape, bv));
  }
  auto& n = node("Conv", in, name);
  const int64_t k = w.shape[2], p = k / 2;
  attr_ints(n, "kernel_shape", {k, k});
  attr_ints(n, "pads", {p, p, p, p});
  attr_ints(n, "strides", {1, 1});
  return n.output(0);
}

std::string GraphBuilder::conv_strided(const std::string& x, const std::string& name, const TensorData& w, const TensorData* b,
                                       int64_t stride, int64_t pad) {
  if (w.shape.size() != 4 || w.shape[2] != w.shape[3]) throw ConvertError("'" + name + ".weight' is not a square convolution kernel");
  std::vector<std::string> in = {x, floats(name + ".weight", w.shape, w.values)};
  if (b) in.push_back(floats(name + ".bias", b->shape, b->values));
  auto& n = node("Conv", in, name);
  attr_ints(n, "kernel_shape", {w.shape[2], w.shape[3]});
  attr_ints(n, "pads", {pad, pad, pad, pad});
  attr_ints(n, "strides", {stride, stride});
  return n.output(0);
}

std::string GraphBuilder::conv_transpose(const std::string& x, const std::string& name, const TensorData& w, const TensorData* b,
                                         int64_t stride, int64_t pad, int64_t output_padding) {
  if (w.shape.size() != 4 || w.shape[2] != w.shape[3]) throw ConvertError("'" + name + ".weight' is not a square convolution kernel");
  std::vector<std::string> in = {x, floats(name + ".weight", w.shape, w.values)};
  if (b) in.push_back(floats(name + ".bias", b->shape, b->values));
  auto& n = node("ConvTranspose", in, name);
  attr_ints(n, "kernel_shape", {w.shape[2], w.shape[3]});
  attr_ints(n, "pads", {pad, pad, pad, pad});
  attr_ints(n, "strides", {stride, stride});
  attr_ints(n, "output_padding", {output_padding, output_padding});
  return n.output(0);
}

std::string GraphBuilder::reflect_pad(const std::string& x, int64_t p, int64_t align) {
  auto& n = node("Pad", {x, ints({0, 0, p, p, 0, 0, p, p})});
  attr_string(n, "mode", "reflect");
  if (align >= 2) attr_int(n, "edgegan_align", align);
  return n.output(0);
}

std::string GraphBuilder::crop_to(const std::string& x, const std::string& ref, int64_t scale) {
  auto& n = node("Pad", {x, ints({0, 0, 0, 0, 0, 0, 0, 0}), "", "", ref});
  attr_string(n, "mode", "constant");
  attr_int(n, "edgegan_size_scale", scale);
  return n.output(0);
}

std::string GraphBuilder::crop(const std::string& x, int64_t c) {
  auto& n = node("Pad", {x, ints({0, 0, -c, -c, 0, 0, -c, -c})});
  attr_string(n, "mode", "constant");
  return n.output(0);
}

std::string GraphBuilder::mean_hw(const std::string& x) {
  auto& n = node("ReduceMean", {x});
  attr_ints(n, "axes", {2, 3});
  attr_int(n, "keepdims", 1);
  return n.output(0);
}

std::string GraphBuilder::slice_channels(const std::string& x, int64_t begin, int64_t end) {
  return node("Slice", {x, ints({begin}), ints({end}), ints({1})}).output(0);
}

std::string GraphBuilder::group_norm(const std::string& x, const std::string& name, int64_t groups, const TensorData& scale,
                                     const TensorData& shift) {
  if (shift.values.size() != scale.values.size()) throw ConvertError("GroupNorm '" + name + "' has parameters of different sizes");
  const int64_t c = static_cast<int64_t>(scale.values.size());
  auto& n = node("GroupNormalization", {x, floats(name + ".weight", {c}, scale.values), floats(name + ".bias", {c}, shift.values)}, name);
  attr_int(n, "num_groups", groups);
  attr_float(n, "epsilon", 1e-5f);
  return n.output(0);
}

std::string GraphBuilder::instance_norm(const std::string& x, int64_t c) {
  auto& n = node("InstanceNormalization", {x, floats(fresh("ones"), {c}, std::vector<float>(static_cast<size_t>(c), 1.f)),
                                           floats(fresh("zeros"), {c}, std::vector<float>(static_cast<size_t>(c), 0.f))});
  attr_float(n, "epsilon", 1e-5f);
  return n.output(0);
}

std::string GraphBuilder::batch_norm(const std::string& x, const std::string& name, const TensorData& scale, const TensorData& shift,
                                     const TensorData& mean, const TensorData& var) {
  const int64_t c = static_cast<int64_t>(scale.values.size());
  for (const TensorData* t : {&shift, &mean, &var})
    if (t->values.size() != scale.values.size()) throw ConvertError("BatchNorm '" + name + "' has parameters of different sizes");
  auto& n = node("BatchNormalization", {x, floats(name + ".weight", {c}, scale.values), floats(name + ".bias", {c}, shift.values),
                                        floats(name + ".running_mean", {c}, mean.values), floats(name + ".running_var", {c}, var.values)},
                 name);
  attr_float(n, "epsilon", 1e-5f);
  return n.output(0);
}

std::string GraphBuilder::relu(const std::string& x) { return node("Relu", {x}).output(0); }
std::string GraphBuilder::tanh(const std::string& x) { return node("Tanh", {x}).output(0); }

std::string GraphBuilder::leaky_relu(const std::string& x, float alpha) {
  auto& n = node("LeakyRelu", {x});
  attr_float(n, "alpha", alpha);
  return n.output(0);
}

std::string GraphBuilder::prelu(const std::string& x, const std::string& name, const TensorData& slope) {
  const int64_t c = slope.shape.empty() ? 1 : slope.shape[0];
  return node("PRelu", {x, floats(name + ".weight", {c, 1, 1}, slope.values)}, name).output(0);
}

std::string GraphBuilder::add(const std::string& a, const std::string& b) { return node("Add", {a, b}).output(0); }

std::string GraphBuilder::mul(const std::string& x, float scalar) {
  return node("Mul", {x, floats(fresh("scale"), {}, {scalar})}).output(0);
}

std::string GraphBuilder::mul(const std::string& a, const std::string& b) { return node("Mul", {a, b}).output(0); }

std::string GraphBuilder::add_constant(const std::string& x, const std::vector<float>& c) {
  const std::vector<int64_t> dims = c.size() == 1 ? std::vector<int64_t>{} : std::vector<int64_t>{1, static_cast<int64_t>(c.size()), 1, 1};
  return node("Add", {x, floats(fresh("shift"), dims, c)}).output(0);
}

std::string GraphBuilder::sigmoid(const std::string& x) { return node("Sigmoid", {x}).output(0); }

std::string GraphBuilder::silu(const std::string& x) { return mul(x, sigmoid(x)); }

std::string GraphBuilder::mish(const std::string& x) { return node("Mish", {x}).output(0); }

std::string GraphBuilder::gelu(const std::string& x) {
  const std::string e = node("Erf", {mul(x, 0.70710678118654752f)}).output(0);
  return mul(mul(x, add_constant(e, {1.f})), 0.5f);
}

std::string GraphBuilder::concat(const std::vector<std::string>& xs) {
  auto& n = node("Concat", xs);
  attr_int(n, "axis", 1);
  return n.output(0);
}

std::string GraphBuilder::upsample_nearest(const std::string& x, int64_t f) {
  const float s = static_cast<float>(f);
  auto& n = node("Resize", {x, "", floats(fresh("scales"), {4}, {1.f, 1.f, s, s})});
  attr_string(n, "mode", "nearest");
  attr_string(n, "coordinate_transformation_mode", "asymmetric");
  attr_string(n, "nearest_mode", "floor");
  return n.output(0);
}

std::string GraphBuilder::pixel_shuffle(const std::string& x, int64_t f) {
  auto& n = node("DepthToSpace", {x});
  attr_int(n, "blocksize", f);
  attr_string(n, "mode", "CRD");
  return n.output(0);
}

std::string GraphBuilder::repeat_channels(const std::string& x, int64_t f) {
  auto& n = node("SpaceToDepth", {upsample_nearest(x, f)});
  attr_int(n, "blocksize", f);
  attr_string(n, "mode", "CRD");
  return n.output(0);
}

std::string GraphBuilder::grid_sample_offsets(const std::string& x, const std::string& offsets, int64_t groups) {
  auto& n = node("GridSample", {x, offsets});
  attr_string(n, "mode", "bilinear");
  attr_string(n, "padding_mode", "border");
  attr_int(n, "align_corners", 0);
  attr_int(n, "edgegan_groups", groups);
  attr_int(n, "edgegan_offsets", 1);
  return n.output(0);
}

std::string GraphBuilder::pixel_unshuffle(const std::string& x, int64_t c, int64_t h, int64_t w, int64_t b) {
  const std::string r6 = node("Reshape", {x, ints({-1, c, h / b, b, w / b, b})}).output(0);
  auto& t = node("Transpose", {r6});
  attr_ints(t, "perm", {0, 1, 3, 5, 2, 4});
  return node("Reshape", {t.output(0), ints({-1, c * b * b, h / b, w / b})}).output(0);
}

}  // namespace edgegan::converter::checkpoint
