#include "converter/onnx_graph.h"

#include "converter/ops/op_lowering.h"

#include <algorithm>
#include <numeric>
#include <set>

#include "converter/errors.h"

namespace edgegan::converter {

namespace {

// Per-sample elements of any run-time tensor, as the engine accepts (model_validate.cpp).
constexpr int64_t kMaxSampleElements = int64_t{1} << 32;

}  // namespace

int64_t product(const std::vector<int64_t>& v, size_t from) {
  int64_t p = 1;
  for (size_t k = from; k < v.size(); ++k) p *= v[k];
  return p;
}

std::vector<int64_t> as_ints(const Value& v, const Node& n, const char* what) {
  if (!v.is_const || !v.c.is_int) throw ConvertError(where(n) + ": " + what + " must be a constant integer tensor");
  return v.c.i;
}

// ONNX Reshape target: 0 copies the input dim, -1 is inferred.
std::vector<int64_t> reshape_target(const Node& n, const std::vector<int64_t>& in, std::vector<int64_t> shape) {
  if (attr_int(n, "allowzero", 0) != 0 && std::count(shape.begin(), shape.end(), 0) > 0)
    throw ConvertError(where(n) + ": attribute 'allowzero' = 1 with a zero in the shape is not supported");
  int64_t known = 1;
  int infer = -1;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == 0) {
      if (k >= in.size()) throw ConvertError(where(n) + ": shape copies a dimension the input does not have");
      shape[k] = in[k];
    }
    if (shape[k] == -1) {
      if (infer >= 0) throw ConvertError(where(n) + ": more than one -1 in the target shape");
      infer = static_cast<int>(k);
    } else if (shape[k] < 0) {
      throw ConvertError(where(n) + ": negative dimension in the target shape");
    } else {
      if (shape[k] != 0 && known > (int64_t{1} << 40) / shape[k]) throw ConvertError(where(n) + ": target shape is too large");
      known *= shape[k];
    }
  }
  const int64_t total = product(in);
  if (infer >= 0) {
    if (known == 0 || total % known != 0) throw ConvertError(where(n) + ": cannot infer the -1 dimension");
    shape[static_cast<size_t>(infer)] = total / known;
  } else if (known != total) {
    throw ConvertError(where(n) + ": target shape holds " + std::to_string(known) + " elements, the input " + std::to_string(total));
  }
  return shape;
}

std::vector<int64_t> unsqueeze_shape(const Node& n, std::vector<int64_t> shape, std::vector<int64_t> axes) {
  const int64_t rank = static_cast<int64_t>(shape.size() + axes.size());
  for (auto& a : axes) {
    if (a < -rank || a >= rank) throw ConvertError(where(n) + ": axis out of range");
    if (a < 0) a += rank;
  }
  std::sort(axes.begin(), axes.end());
  for (int64_t a : axes) shape.insert(shape.begin() + a, 1);
  return shape;
}

std::vector<int64_t> squeeze_shape(const Node& n, const std::vector<int64_t>& shape, std::vector<int64_t> axes) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::set<int64_t> drop;
  if (axes.empty()) {
    for (int64_t k = 0; k < rank; ++k)
      if (shape[static_cast<size_t>(k)] == 1) drop.insert(k);
  }
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) throw ConvertError(where(n) + ": axis out of range");
    if (a < 0) a += rank;
    if (shape[static_cast<size_t>(a)] != 1) throw ConvertError(where(n) + ": cannot squeeze a dimension of size " + std::to_string(shape[static_cast<size_t>(a)]));
    drop.insert(a);
  }
  std::vector<int64_t> out;
  for (int64_t k = 0; k < rank; ++k)
    if (!drop.count(k)) out.push_back(shape[static_cast<size_t>(k)]);
  return out;
}

// Axes of Unsqueeze/Squeeze: an attribute up to opset 12, an input from 13.
std::vector<int64_t> axes_of(const Node& n, const std::map<std::string, Value>& values) {
  if (find_attr(n, "axes")) return attr_ints(n, "axes", {});
  if (n.inputs.size() > 1 && !n.inputs[1].empty()) {
    const auto it = values.find(n.inputs[1]);
    if (it == values.end()) throw ConvertError(where(n) + ": input '" + n.inputs[1] + "' is not defined before this node");
    return as_ints(it->second, n, "axes");
  }
  return {};
}


int64_t declared_batch(const onnx::GraphProto& g) {
  std::set<std::string> initializers;
  for (const auto& t : g.initializer()) initializers.insert(t.name());
  int64_t batch = 0;
  for (const auto& in : g.input()) {
    if (initializers.count(in.name())) continue;
    const auto& shape = in.type().tensor_type().shape();
    if (shape.dim_size() == 0 || !shape.dim(0).has_dim_value()) return 0;
    const int64_t b = shape.dim(0).dim_value();
    if (b < 1 || (batch != 0 && b != batch)) return 0;
    batch = b;
  }
  return batch;
}

OnnxGraph::OnnxGraph(const onnx::ModelProto& model) {
  for (const auto& op : model.opset_import())
    if (op.domain().empty() || op.domain() == "ai.onnx") opset_ = op.version();
  if (opset_ == 0) throw ConvertError("the model declares no default-domain opset");
  if (opset_ < kOldestOpset || opset_ > kNewestOpset)
    throw ConvertError("opset " + std::to_string(opset_) + " is not supported (edgegan-convert reads opsets " + std::to_string(kOldestOpset) + "-" +
                       std::to_string(kNewestOpset) + "; re-export with torch.onnx.export(..., opset_version=17))");
  const auto& g = model.graph();
  for (const auto& t : g.initializer()) initializers_[t.name()] = decode_tensor(t, "initializer '" + t.name() + "'");
  export_batch_ = declared_batch(g);
  for (const auto& in : g.input()) {
    if (initializers_.count(in.name())) continue;  // old exporters list initializers as inputs
    GraphInput gi;
    gi.name = in.name();
    if (!in.type().has_tensor_type()) throw ConvertError("graph input '" + in.name() + "' is not a tensor");
    const int et = in.type().tensor_type().elem_type();
    if (et == onnx::TensorProto::INT64 || et == onnx::TensorProto::INT32) gi.is_int = true;
    else if (et != onnx::TensorProto::FLOAT) throw ConvertError("graph input '" + in.name() + "' has element type " + std::to_string(et) + "; float32 and int64 are supported");
    const auto& shape = in.type().tensor_type().shape();
    if (shape.dim_size() < 1) throw ConvertError("graph input '" + in.name() + "' must have a batch dimension");
    for (int k = 0; k < shape.dim_size(); ++k) {
      const auto& d = shape.dim(k);
      if (k == 0) { gi.dims.push_back(-1); continue; }
      if (!d.has_dim_value() || d.dim_value() < 1)
        throw ConvertError("graph input '" + in.name() + "': dimension " + std::to_string(k) + " must be a fixed positive number (only the batch may vary)");
      gi.dims.push_back(d.dim_value());
    }
    checked_numel(std::vector<int64_t>(gi.dims.begin() + 1, gi.dims.end()), kMaxSampleElements, "graph input '" + in.name() + "'");
    inputs_.push_back(gi);
  }
  if (inputs_.empty()) throw ConvertError("the graph has no inputs");
  for (const auto& out : g.output()) outputs_.push_back(out.name());
  if (outputs_.empty()) throw ConvertError("the graph has no outputs");
  for (int k = 0; k < g.node_size(); ++k) {
    const auto& p = g.node(k);
    Node n;
    n.proto = &p;
    n.op = p.op_type();
    n.name = p.name().empty() ? n.op + " #" + std::to_string(k) : p.name();
    if (!p.domain().empty() && p.domain() != "ai.onnx") throw ConvertError(where(n) + ": op domain '" + p.domain() + "' is not supported");
    n.inputs.assign(p.input().begin(), p.input().end());
    n.outputs.assign(p.output().begin(), p.output().end());
    nodes_.push_back(std::move(n));
  }
}

AnalysisPass OnnxGraph::analyse(int64_t batch) const {
  AnalysisPass pass;
  pass.batch = batch;
  pass.export_batch = export_batch_;
  auto& values = pass.values;
  for (const auto& [name, t] : initializers_) {
    Value v;
    v.is_const = true;
    v.c = t;
    values[name] = v;
  }
  for (const GraphInput& in : inputs_) {
    Value v;
    v.is_int = in.is_int;
    v.shape = in.dims;
    v.shape[0] = batch;
    values[in.name] = v;
  }

  for (const Node& n : nodes_) evaluate(n, pass);
  for (const auto& name : outputs_) {
    const auto it = values.find(name);
    if (it == values.end()) throw ConvertError("graph output '" + name + "' is never produced");
    if (it->second.is_const) throw ConvertError("graph output '" + name + "' is a constant; nothing to compute");
  }
  return pass;
}

void OnnxGraph::inline_if(const Node& n, AnalysisPass& pass) const {
  check_attributes(n, {"then_branch", "else_branch"});
  const auto it = pass.values.find(n.inputs.empty() ? "" : n.inputs[0]);
  if (it == pass.values.end() || !it->second.is_const || it->second.c.numel() != 1)
    throw ConvertError(where(n) + ": only an If whose condition is known at conversion time is supported (torch emits these for squeeze/shape checks)");
  const bool condition = it->second.c.at(0) != 0;
  pass.branch_choices.push_back(condition);
  const auto* branch = find_attr(n, condition ? "then_branch" : "else_branch");
  if (!branch || branch->type() != onnx::AttributeProto::GRAPH) throw ConvertError(where(n) + ": missing branch graph");
  const onnx::GraphProto& g = branch->g();
  for (const auto& t : g.initializer()) {
    Value v;
    v.is_const = true;
    v.c = decode_tensor(t, where(n) + " branch initializer '" + t.name() + "'");
    pass.values[t.name()] = v;
  }
  for (int k = 0; k < g.node_size(); ++k) {
    Node inner;
    inner.proto = &g.node(k);
    inner.op = inner.proto->op_type();
    inner.name = inner.proto->name().empty() ? n.name + "/" + inner.op + " #" + std::to_string(k) : inner.proto->name();
    inner.inputs.assign(inner.proto->input().begin(), inner.proto->input().end());
    inner.outputs.assign(inner.proto->output().begin(), inner.proto->output().end());
    evaluate(inner, pass);
  }
  if (g.output_size() != static_cast<int>(n.outputs.size())) throw ConvertError(where(n) + ": branch outputs do not match the node's outputs");
  // The If's outputs are the branch's outputs: synthetic Identity nodes connect them.
  for (int k = 0; k < g.output_size(); ++k) {
    auto proto = std::make_shared<onnx::NodeProto>();
    proto->set_op_type("Identity");
    proto->set_name(n.name + "/output " + std::to_string(k));
    proto->add_input(g.output(k).name());
    proto->add_output(n.outputs[static_cast<size_t>(k)]);
    pass.synthetic.push_back(proto);
    Node id;
    id.proto = proto.get();
    id.op = "Identity";
    id.name = proto->name();
    id.inputs = {g.output(k).name()};
    id.outputs = {n.outputs[static_cast<size_t>(k)]};
    evaluate(id, pass);
  }
}

// ONNX LayerNormalization (opset 17) as the nodes torch exported before it:
//   d = x - mean(x), y = d / sqrt(mean(d * d) + epsilon) * scale + bias
// over the axes from `axis` on, so each step lowers as the run-time math it is (Reduce,
// Binary, UnaryMath; the Div by the Sqrt becomes a product with its rsqrt) and a
// decomposed export and the opset-17 op convert alike. Its optional Mean and InvStdDev
// outputs are the mean and 1 / the Sqrt's output, made only when something reads them
// (so the usual form keeps its rsqrt product).
void OnnxGraph::expand_layer_norm(const Node& n, AnalysisPass& pass) const {
  check_attributes(n, {"axis", "epsilon", "stash_type"});
  if (attr_int(n, "stash_type", 1) != 1)
    throw ConvertError(where(n) + ": attribute 'stash_type' = " + std::to_string(attr_int(n, "stash_type", 1)) + " is not supported (1: float)");
  auto read = [&](size_t k) {
    if (k >= n.outputs.size() || n.outputs[k].empty()) return false;
    bool r = std::find(outputs_.begin(), outputs_.end(), n.outputs[k]) != outputs_.end();
    for (const Node& other : nodes_) r = r || std::find(other.inputs.begin(), other.inputs.end(), n.outputs[k]) != other.inputs.end();
    return r;
  };
  if (n.inputs.size() < 2 || n.inputs[0].empty() || n.inputs[1].empty()) throw ConvertError(where(n) + ": inputs X and Scale are required");
  const auto x = pass.values.find(n.inputs[0]);
  if (x == pass.values.end()) throw ConvertError(where(n) + ": input '" + n.inputs[0] + "' is not defined before this node");
  if (x->second.is_const) throw ConvertError(where(n) + ": a LayerNormalization of a constant is not supported");
  const int64_t rank = static_cast<int64_t>(x->second.shape.size());
  int64_t axis = attr_int(n, "axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 1 || axis >= rank)
    throw ConvertError(where(n) + ": attribute 'axis' = " + std::to_string(attr_int(n, "axis", -1)) + " is not supported (an axis after the batch's)");
  std::vector<int64_t> axes;
  for (int64_t a = axis; a < rank; ++a) axes.push_back(a);
  const std::string prefix = n.outputs[0] + "/layer_norm/";
  auto add = [&](const std::string& op, std::vector<std::string> inputs, const std::string& output) -> onnx::NodeProto& {
    auto proto = std::make_shared<onnx::NodeProto>();
    proto->set_op_type(op);
    proto->set_name(n.name + "/" + op + " " + output);
    for (const auto& i : inputs) proto->add_input(i);
    proto->add_output(output);
    pass.synthetic.push_back(proto);
    return *proto;
  };
  auto run = [&](onnx::NodeProto& proto) {
    Node s;
    s.proto = &proto;
    s.op = proto.op_type();
    s.name = proto.name();
    s.inputs.assign(proto.input().begin(), proto.input().end());
    s.outputs.assign(proto.output().begin(), proto.output().end());
    evaluate(s, pass);
  };
  auto axes_attr = [&](onnx::NodeProto& p) {
    auto* a = p.add_attribute();
    a->set_name("axes");
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : axes) a->add_ints(v);
    return &p;
  };
  onnx::NodeProto& eps = add("Constant", {}, prefix + "epsilon");
  auto* e = eps.add_attribute();
  e->set_name("value_float");
  e->set_type(onnx::AttributeProto::FLOAT);
  e->set_f(attr_float(n, "epsilon", 1e-5f));
  run(eps);
  // The square as torch's decomposed form writes it (Pow 2), so both forms lower alike.
  onnx::NodeProto& two = add("Constant", {}, prefix + "two");
  auto* t = two.add_attribute();
  t->set_name("value_float");
  t->set_type(onnx::AttributeProto::FLOAT);
  t->set_f(2.f);
  run(two);
  run(*axes_attr(add("ReduceMean", {n.inputs[0]}, prefix + "mean")));
  run(add("Sub", {n.inputs[0], prefix + "mean"}, prefix + "centred"));
  run(add("Pow", {prefix + "centred", prefix + "two"}, prefix + "squared"));
  run(*axes_attr(add("ReduceMean", {prefix + "squared"}, prefix + "variance")));
  run(add("Add", {prefix + "variance", prefix + "epsilon"}, prefix + "variance_eps"));
  run(add("Sqrt", {prefix + "variance_eps"}, prefix + "deviation"));
  run(add("Div", {prefix + "centred", prefix + "deviation"}, prefix + "normalised"));
  const bool bias = n.inputs.size() > 2 && !n.inputs[2].empty();
  run(add("Mul", {prefix + "normalised", n.inputs[1]}, bias ? prefix + "scaled" : n.outputs[0]));
  if (bias) run(add("Add", {prefix + "scaled", n.inputs[2]}, n.outputs[0]));
  if (read(1)) run(add("Identity", {prefix + "mean"}, n.outputs[1]));
  if (read(2)) run(add("Reciprocal", {prefix + "deviation"}, n.outputs[2]));
}

const Value& RuntimeNode::input(size_t k) const {
  if (!has_input(k)) throw ConvertError(where(node) + ": input " + std::to_string(k) + " is missing");
  const auto it = pass_.values.find(node.inputs[k]);
  if (it == pass_.values.end())
    throw ConvertError(where(node) + ": input '" + node.inputs[k] + "' is not defined before this node (is the graph topologically sorted?)");
  return it->second;
}

const Value& RuntimeNode::runtime_input(size_t k) const {
  const Value& v = input(k);
  if (v.is_const) throw ConvertError(where(node) + ": a run-time op whose input " + std::to_string(k) + " is constant is not supported");
  return v;
}

const ConstTensor& RuntimeNode::constant(size_t k, const char* what) const {
  const Value& v = input(k);
  if (!v.is_const)
    throw ConvertError(where(node) + ": " + what + " must be a constant (initializer), but '" + node.inputs[k] + "' is computed at run time");
  return v.c;
}

const ConstTensor& RuntimeNode::float_constant(size_t k, const char* what) const {
  const ConstTensor& c = constant(k, what);
  if (c.is_int)
    throw ConvertError(where(node) + ": " + what + " must be floating point, but '" + node.inputs[k] + "' holds integers");
  return c;
}

void RuntimeNode::set_output_at(size_t k, std::vector<int64_t> shape, bool is_int) {
  if (k >= node.outputs.size() || node.outputs[k].empty()) throw ConvertError(where(node) + ": output " + std::to_string(k) + " is missing");
  if (shape.empty()) throw ConvertError(where(node) + ": output has no batch dimension");
  for (size_t d = 1; d < shape.size(); ++d)
    if (shape[d] < 1) throw ConvertError(where(node) + ": output dimension " + std::to_string(d) + " is " + std::to_string(shape[d]));
  checked_numel(std::vector<int64_t>(shape.begin() + 1, shape.end()), kMaxSampleElements, where(node));
  Value v;
  v.shape = std::move(shape);
  v.is_int = is_int;
  pass_.values[node.outputs[k]] = std::move(v);
}

void OnnxGraph::evaluate(const Node& n, AnalysisPass& pass) const {
  auto& values = pass.values;
  if (n.op == "If") {
    inline_if(n, pass);
    return;
  }
  if (n.op == "LayerNormalization") {
    expand_layer_norm(n, pass);
    return;
  }
  {
    auto input = [&](size_t k) -> const Value& {
      if (k >= n.inputs.size() || n.inputs[k].empty()) throw ConvertError(where(n) + ": input " + std::to_string(k) + " is missing");
      const auto it = values.find(n.inputs[k]);
      if (it == values.end()) throw ConvertError(where(n) + ": input '" + n.inputs[k] + "' is not defined before this node (is the graph topologically sorted?)");
      return it->second;
    };
    auto has_input = [&](size_t k) { return k < n.inputs.size() && !n.inputs[k].empty(); };
    auto constant = [&](size_t k, const char* what) -> const ConstTensor& {
      const Value& v = input(k);
      if (!v.is_const) throw ConvertError(where(n) + ": " + what + " must be a constant (initializer), but '" + n.inputs[k] + "' is computed at run time");
      return v.c;
    };
    auto set_const = [&](ConstTensor c) {
      Value v;
      v.is_const = true;
      v.c = std::move(c);
      values[n.outputs.at(0)] = std::move(v);
    };
    if (n.outputs.empty()) throw ConvertError(where(n) + ": node has no outputs");
    bool all_const = true;
    for (size_t k = 0; k < n.inputs.size(); ++k)
      if (has_input(k)) all_const = all_const && input(k).is_const;
    const std::string& op = n.op;
    bool folded = true;

    if (op == "Constant") {
      check_attributes(n, {"value", "value_float", "value_floats", "value_int", "value_ints"});
      if (const auto* a = find_attr(n, "value")) set_const(decode_tensor(a->t(), where(n)));
      else if (const auto* a = find_attr(n, "value_float")) set_const(ConstTensor::floats({a->f()}, {}));
      else if (const auto* a = find_attr(n, "value_floats")) set_const(ConstTensor::floats({a->floats().begin(), a->floats().end()}, {a->floats_size()}));
      else if (const auto* a = find_attr(n, "value_int")) set_const(ConstTensor::ints({a->i()}, {}));
      else if (const auto* a = find_attr(n, "value_ints")) set_const(ConstTensor::ints({a->ints().begin(), a->ints().end()}, {a->ints_size()}));
      else throw ConvertError(where(n) + ": Constant without a supported value attribute");
    } else if (op == "Identity" || op == "Dropout") {
      if (op == "Dropout" && has_input(2) && !(input(2).is_const && input(2).c.numel() == 1 && input(2).c.at(0) == 0))
        throw ConvertError(where(n) + ": Dropout in training mode is not supported (export with model.eval())");
      if (n.outputs.size() > 1 && !n.outputs[1].empty()) {
        for (const Node& other : nodes_)
          for (const auto& i : other.inputs)
            if (i == n.outputs[1]) throw ConvertError(where(n) + ": the Dropout mask output is used, which is not supported");
      }
      values[n.outputs[0]] = input(0);
      folded = input(0).is_const;
      // An Identity of an activation is resolved by the lowering as an alias, not an op.
    } else if (op == "Shape") {
      check_attributes(n, {"start", "end"});
      const Value& x = input(0);
      std::vector<int64_t> shape = x.is_const ? x.c.dims : x.shape;
      const int64_t rank = static_cast<int64_t>(shape.size());
      int64_t s = attr_int(n, "start", 0), e = attr_int(n, "end", rank);
      if (s < 0) s += rank;
      if (e < 0) e += rank;
      s = std::clamp<int64_t>(s, 0, rank);
      e = std::clamp<int64_t>(e, s, rank);
      std::vector<int64_t> part(shape.begin() + s, shape.begin() + e);
      set_const(ConstTensor::ints(part, {static_cast<int64_t>(part.size())}));
    } else if (all_const && op == "Gather") {
      check_attributes(n, {"axis"});
      set_const(gather(constant(0, "data"), constant(1, "indices"), attr_int(n, "axis", 0), where(n)));
    } else if (all_const && op == "Unsqueeze") {
      ConstTensor c = constant(0, "data");
      c.dims = unsqueeze_shape(n, c.dims, axes_of(n, values));
      set_const(c);
    } else if (all_const && op == "Squeeze") {
      ConstTensor c = constant(0, "data");
      c.dims = squeeze_shape(n, c.dims, axes_of(n, values));
      set_const(c);
    } else if (all_const && op == "Concat") {
      std::vector<const ConstTensor*> parts;
      for (size_t k = 0; k < n.inputs.size(); ++k) parts.push_back(&constant(k, "input"));
      set_const(concat(parts, attr_int(n, "axis", 0), where(n)));
    } else if (all_const && op == "Slice") {
      std::vector<int64_t> starts, ends, axes, steps;
      if (find_attr(n, "starts")) {  // opset < 10 style attributes
        starts = attr_ints(n, "starts", {});
        ends = attr_ints(n, "ends", {});
        axes = attr_ints(n, "axes", {});
      } else {
        starts = as_ints(input(1), n, "starts");
        ends = as_ints(input(2), n, "ends");
        if (has_input(3)) axes = as_ints(input(3), n, "axes");
        if (has_input(4)) steps = as_ints(input(4), n, "steps");
      }
      set_const(slice(constant(0, "data"), starts, ends, axes, steps, where(n)));
    } else if (all_const && op == "Cast") {
      // saturate (opset 19) and round_mode (opset 25) concern only float8 and float4 targets.
      check_attributes(n, {"to", "saturate", "round_mode"});
      const int64_t to = attr_int(n, "to", onnx::TensorProto::FLOAT);
      const bool to_int = to == onnx::TensorProto::INT64 || to == onnx::TensorProto::INT32 || to == onnx::TensorProto::BOOL;
      if (!to_int && to != onnx::TensorProto::FLOAT && to != onnx::TensorProto::DOUBLE)
        throw ConvertError(where(n) + ": attribute 'to' = " + std::to_string(to) + " is not supported");
      set_const(cast(constant(0, "input"), to_int));
    } else if (all_const && (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Equal")) {
      set_const(broadcast_binary(op, constant(0, "A"), constant(1, "B"), where(n)));
    } else if (all_const && op == "Mod") {  // the reference code's pad to a multiple: (ws - h % ws) % ws
      check_attributes(n, {"fmod"});
      const int64_t fmod = attr_int(n, "fmod", 0);
      if (fmod != 0 && fmod != 1) throw ConvertError(where(n) + ": attribute 'fmod' = " + std::to_string(fmod) + " is not supported (0 or 1)");
      set_const(broadcast_binary(fmod ? "FMod" : "Mod", constant(0, "A"), constant(1, "B"), where(n)));
    } else if (all_const && op == "Reshape") {
      ConstTensor c = constant(0, "data");
      c.dims = reshape_target(n, c.dims, as_ints(input(1), n, "shape"));
      set_const(c);
    } else if (all_const && op == "Transpose") {
      check_attributes(n, {"perm"});
      set_const(transpose(constant(0, "data"), attr_ints(n, "perm", {}), where(n)));
    } else if (all_const && op == "ConstantOfShape") {
      const std::vector<int64_t> dims = as_ints(input(0), n, "shape");
      ConstTensor fill = ConstTensor::floats({0.f}, {1});
      if (const auto* a = find_attr(n, "value")) fill = decode_tensor(a->t(), where(n));
      if (fill.numel() != 1) throw ConvertError(where(n) + ": attribute 'value' must hold one element, not " + std::to_string(fill.numel()));
      const int64_t count = checked_numel(dims, kMaxFoldedElements, where(n));
      if (fill.is_int) set_const(ConstTensor::ints(std::vector<int64_t>(static_cast<size_t>(count), fill.i.at(0)), dims));
      else set_const(ConstTensor::floats(std::vector<float>(static_cast<size_t>(count), fill.f.at(0)), dims));
    } else if (const OpLowering* lowering = lowering_of_onnx(op)) {
      // An op computed at run time: its kind checks it and infers its output shape.
      folded = false;
      RuntimeNode node(n, pass);
      lowering->infer(node);
    } else {
      throw ConvertError(where(n) + ": op '" + op + "' is not supported" + (all_const ? "" : " on run-time tensors"));
    }
    pass.nodes.push_back(n);
    pass.folded.push_back(folded);
  }
}

}  // namespace edgegan::converter
