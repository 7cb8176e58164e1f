#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "converter/batch_folds.h"
#include "converter/conv_input_maps.h"
#include "converter/egan_ir.h"
#include "converter/errors.h"
#include "converter/lowering.h"
#include "converter/modulated_convs.h"
#include "converter/ops/op_lowering.h"

namespace edgegan::converter {
namespace {

// Batch sizes of the two analysis passes: any value works; distinct primes make an
// accidental match between a batch-dependent and a fixed dimension unlikely.
constexpr int64_t kBatchA = 3, kBatchB = 5;

void check_batch_independence(const OnnxGraph& g, const AnalysisPass& a, const AnalysisPass& b) {
  for (const auto& [name, va] : a.values) {
    if (va.is_const) continue;
    const auto found = b.values.find(name);
    if (found == b.values.end()) throw ConvertError("tensor '" + name + "' exists at one batch size and not at another");
    const Value& vb = found->second;
    const bool ok = !vb.is_const && !va.shape.empty() && va.shape[0] == a.batch && vb.shape.size() == va.shape.size() &&
                    vb.shape[0] == b.batch && std::equal(va.shape.begin() + 1, va.shape.end(), vb.shape.begin() + 1);
    if (!ok) throw ConvertError("tensor '" + name + "': its shape does not keep the batch as dimension 0 independently of the rest; edgegan needs batch-independent generators");
  }
  if (a.branch_choices != b.branch_choices) throw ConvertError("an If node takes a different branch at another batch size; edgegan needs batch-independent generators");
  (void)g;
}

}  // namespace

std::optional<SpatialMap> spatial_map(const std::vector<int64_t>& shape) {
  if (shape.size() == 4) return SpatialMap{shape[1], shape[2], shape[3]};
  if (shape.size() == 3) return SpatialMap{shape[1], 1, shape[2]};
  return std::nullopt;
}

int spatial_storage_axis(size_t rank, int64_t axis) {
  if (axis == 1) return 3;                                     // channels
  return static_cast<int>(rank == 3 ? 2 : axis - 1);          // [N, C, L]: L -> W; [N, C, H, W]: H -> 1, W -> 2
}

IrModel Lowering::run() {
  const auto& nodes = a_.nodes;
  // Aliases: run-time Identity/Dropout, resolved before counting consumers.
  for (size_t i = 0; i < nodes.size(); ++i)
    if (!a_.folded[i] && (nodes[i].op == "Identity" || nodes[i].op == "Dropout")) alias_[nodes[i].outputs[0]] = resolve(nodes[i].inputs[0]);
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (a_.folded[i] || nodes[i].op == "Identity" || nodes[i].op == "Dropout") continue;
    std::set<std::string> seen;
    for (const auto& in : nodes[i].inputs)
      if (!in.empty() && !value(in).is_const && seen.insert(resolve(in)).second) consumers_[resolve(in)]++;
  }
  for (const auto& out : g_.outputs()) consumers_[resolve(out)]++;

  // Activations exported as several nodes (x * tanh(softplus(x)), torch's GELU and SiLU).
  std::set<size_t> skipped;
  const std::map<size_t, Node> activations = match_activation_patterns(skipped);

  for (const GraphInput& in : g_.inputs()) {
    const int t = new_tensor(in.name, value(in.name));
    ir_.inputs.push_back({t, schema::InputRole_Other, 0, 0});
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    if (a_.folded[i] || n.op == "Identity" || n.op == "Dropout" || skipped.count(i)) continue;  // folded, aliases, or in a pattern
    if (claimed_.count(n.outputs[0])) continue;  // lowered with an earlier node
    if (const auto m = activations.find(i); m != activations.end()) {
      op_lowering<schema::OpKind_Elementwise>().lower(m->second, *this);
      continue;
    }
    const OpLowering* lowering = lowering_of_onnx(n.op);
    if (!lowering) throw ConvertError(where(n) + ": op '" + n.op + "' is not supported");
    lowering->lower(n, *this);
  }
  finish_outputs();
  assign_roles();
  fuse_conv_input_maps(ir_);
  fuse_modulated_convs(ir_);
  return std::move(ir_);
}

const Value& Lowering::value(const std::string& name) const {
  const auto it = a_.values.find(resolve(name));
  if (it == a_.values.end()) throw ConvertError("tensor '" + name + "' is used but never defined");
  return it->second;
}

std::string Lowering::resolve(const std::string& name) const {
  auto it = alias_.find(name);
  return it == alias_.end() ? name : it->second;
}

IrTensor Lowering::ir_tensor(const std::string& name, const Value& v, bool nhwc_map) {
  IrTensor t;
  t.name = name;
  t.is_int = v.is_int;
  t.nhwc = v.shape.size() == 4 || (nhwc_map && v.shape.size() == 3 && !v.is_int);
  t.dims.push_back(-1);
  if (t.nhwc) {
    const SpatialMap m = *spatial_map(v.shape);
    t.dims.insert(t.dims.end(), {m.h, m.w, m.c});
  } else {
    t.dims.insert(t.dims.end(), v.shape.begin() + 1, v.shape.end());
  }
  return t;
}

int Lowering::new_tensor(const std::string& name, const Value& v, bool nhwc_map) {
  ir_.tensors.push_back(ir_tensor(name, v, nhwc_map));
  const int index = static_cast<int>(ir_.tensors.size()) - 1;
  tensor_of_[name] = index;
  return index;
}

int Lowering::tensor(const Node& n, size_t k) const {
  const auto it = tensor_of_.find(resolve(n.inputs[k]));
  if (it == tensor_of_.end()) throw ConvertError(where(n) + ": input '" + n.inputs[k] + "' is not a run-time tensor");
  return it->second;
}

int Lowering::spatial_tensor(const Node& n, size_t k) {
  const int t = tensor(n, k);
  const Value& v = value(n.inputs[k]);
  if (is_nhwc(t) || v.shape.size() != 3 || v.is_int) return t;
  const auto it = nhwc_copy_.find(t);
  if (it != nhwc_copy_.end()) return it->second;
  const IrTensor& src = ir_.tensors[static_cast<size_t>(t)];
  const int copy = relayout(t, src.name + ":nhwc", v.shape, true, src.name + ":to_nhwc");
  nhwc_copy_[t] = copy;
  return copy;
}

int Lowering::relayout(int t, const std::string& name, const std::vector<int64_t>& shape, bool to_nhwc, const std::string& op_name) {
  Value v;
  v.shape = shape;
  IrOp op;
  op.kind = schema::OpKind_Reshape;
  op.name = op_name;
  op.inputs = {t};
  op.output = new_tensor(name, v, to_nhwc);
  ir_.ops.push_back(std::move(op));
  producer_[ir_.ops.back().output] = static_cast<int>(ir_.ops.size()) - 1;
  return ir_.ops.back().output;
}

IrOp& Lowering::add_op(schema::OpKind kind, const Node& n, std::vector<int> inputs, size_t output) {
  IrOp op;
  op.kind = kind;
  op.name = n.name;
  op.inputs = std::move(inputs);
  // A rank-3 output is an NHWC map when the op reads one (a convolution, a pool, or an
  // op that keeps its input's layout); a Reshape's is row-major (ONNX order).
  const bool map_input = kind != schema::OpKind_Reshape && !op.inputs.empty() && is_nhwc(op.inputs[0]);
  op.output = new_tensor(n.outputs.at(output), value(n.outputs.at(output)), map_input);
  ir_.ops.push_back(std::move(op));
  producer_[ir_.ops.back().output] = static_cast<int>(ir_.ops.size()) - 1;
  return ir_.ops.back();
}

IrOp& Lowering::add_op_with_new_tensor(schema::OpKind kind, const Node& n, std::vector<int> inputs, const std::string& name,
                                       const std::vector<int64_t>& shape) {
  if (tensor_of_.count(name) || a_.values.count(name)) throw ConvertError(where(n) + ": internal: tensor name '" + name + "' is taken");
  Value v;
  v.shape = shape;
  IrOp op;
  op.kind = kind;
  op.name = n.name;
  op.inputs = std::move(inputs);
  const bool map_input = kind != schema::OpKind_Reshape && !op.inputs.empty() && is_nhwc(op.inputs[0]);
  op.output = new_tensor(name, v, map_input);
  ir_.ops.push_back(std::move(op));
  producer_[ir_.ops.back().output] = static_cast<int>(ir_.ops.size()) - 1;
  consumers_[name] = 1;
  return ir_.ops.back();
}

int Lowering::storage_axis(int tensor, size_t rank, int64_t axis) const {
  return is_nhwc(tensor) ? spatial_storage_axis(rank, axis) : static_cast<int>(axis);
}

IrOp* Lowering::sole_producer(const Node& n, size_t input) {
  const std::string src = resolve(n.inputs[input]);
  const int t = tensor(n, input);
  const auto it = producer_.find(t);
  if (it == producer_.end() || consumers_[src] != 1) return nullptr;
  IrOp& op = ir_.ops[static_cast<size_t>(it->second)];
  if (op.activation != schema::Activation_None || residual_of(op) >= 0) return nullptr;
  return &op;
}

IrOp* Lowering::fusable_producer(const Node& n, Fusion fusion, size_t input) {
  IrOp* op = sole_producer(n, input);
  return op && op_lowering(op->kind).epilogue_fusions().takes(fusion) ? op : nullptr;
}

IrOp* Lowering::producer_of_kind(const Node& n, schema::OpKind kind, size_t input) {
  IrOp* op = sole_producer(n, input);
  return op && op->kind == kind ? op : nullptr;
}

int Lowering::producer_index(int t) const {
  const auto it = producer_.find(t);
  return it == producer_.end() ? -1 : it->second;
}

void Lowering::alias_output(const Node& n) {
  const std::string in = resolve(n.inputs[0]);
  consumers_[n.outputs[0]] += consumers_[in] - 1;  // the other readers of the input read the same tensor
  tensor_of_[n.outputs[0]] = tensor(n, 0);
}

bool Lowering::tensor_holds(int t, const std::string& name) const {
  const IrTensor& have = ir_.tensors[static_cast<size_t>(t)];
  const IrTensor want = ir_tensor(name, value(name));  // rank 3: row-major, as a Reshape writes it
  return have.dims == want.dims && have.nhwc == want.nhwc && have.is_int == want.is_int;
}

const Node* Lowering::sole_reader(const std::string& value) const {
  const std::string v = resolve(value);
  for (const auto& out : g_.outputs())
    if (resolve(out) == v) return nullptr;
  const Node* reader = nullptr;
  const auto& nodes = a_.nodes;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (a_.folded[i] || nodes[i].op == "Identity" || nodes[i].op == "Dropout") continue;
    for (const auto& in : nodes[i].inputs)
      if (!in.empty() && resolve(in) == v) {
        if (reader && reader != &nodes[i]) return nullptr;
        reader = &nodes[i];
      }
  }
  return reader;
}

void Lowering::absorb(const Node& n, IrOp& op) {
  op.name += "+" + n.name;
  tensor_of_[n.outputs[0]] = op.output;
}

const Node* Lowering::sole_consumer(const Node& n) const { return sole_reader(n.outputs[0]); }

const Node* Lowering::producer_node(const std::string& value) const {
  const std::string v = resolve(value);
  for (size_t i = 0; i < a_.nodes.size(); ++i)
    if (!a_.folded[i])
      for (const std::string& out : a_.nodes[i].outputs)
        if (out == v) return &a_.nodes[i];
  return nullptr;
}

void Lowering::take_over(IrOp& op, const Node& n) {
  op.name += "+" + n.name;
  IrTensor& t = ir_.tensors[static_cast<size_t>(op.output)];
  t = ir_tensor(n.outputs[0], value(n.outputs[0]), t.nhwc);
  tensor_of_[n.outputs[0]] = op.output;
}

void Lowering::scale_and_shift(IrOp& op, const std::vector<float>& scale, const std::vector<float>& shift) {
  const OpLowering& kind = op_lowering(op.kind);
  const int64_t c = kind.output_channels(op);
  if (op.bias.empty()) op.bias.assign(static_cast<size_t>(c), 0.f);
  const int64_t total = static_cast<int64_t>(op.weights.size());
  for (int64_t k = 0; k < total; ++k) op.weights[static_cast<size_t>(k)] *= scale[static_cast<size_t>(kind.output_channel_of_weight(op, k))];
  for (int64_t ch = 0; ch < c; ++ch)
    op.bias[static_cast<size_t>(ch)] = op.bias[static_cast<size_t>(ch)] * scale[static_cast<size_t>(ch)] + shift[static_cast<size_t>(ch)];
}

void Lowering::finish_outputs() {
  std::set<int> used;
  for (const auto& name : g_.outputs()) {
    const auto it = tensor_of_.find(resolve(name));
    if (it == tensor_of_.end()) throw ConvertError("graph output '" + name + "' is not computed by any supported op");
    int t = it->second;
    for (const IrInput& in : ir_.inputs)
      if (in.tensor == t) throw ConvertError("graph output '" + name + "' is a graph input; nothing to compute");
    if (!used.insert(t).second) throw ConvertError("graph output '" + name + "' duplicates another output");
    if (ir_.tensors[static_cast<size_t>(t)].is_int) throw ConvertError("graph output '" + name + "' is an integer tensor");
    // A rank-3 map leaves the model in ONNX order [N, C, L], as graph inputs come in
    // (free when C = 1: the Reshape aliases).
    const Value& v = value(name);
    if (v.shape.size() == 3 && is_nhwc(t)) {
      t = relayout(t, name + ":ncl", v.shape, false, name + ":to_ncl");
      sequence_outputs_.insert(t);
    }
    // The tensor takes the ONNX output's name, so `edgegan run` writes outputs by their ONNX names.
    for (auto& other : ir_.tensors)
      if (other.name == name) other.name += ":internal";
    ir_.tensors[static_cast<size_t>(t)].name = name;
    IrOutput out;
    out.tensor = t;
    ir_.outputs.push_back(out);
  }
}

void Lowering::assign_roles() {
  bool image_output = false;
  for (IrOutput& out : ir_.outputs) {
    const IrTensor& t = ir_.tensors[static_cast<size_t>(out.tensor)];
    out.role = t.nhwc ? schema::OutputRole_Image : sequence_outputs_.count(out.tensor) ? schema::OutputRole_Other : schema::OutputRole_Score;
    image_output = image_output || t.nhwc;
    auto it = producer_.find(out.tensor);
    if (sequence_outputs_.count(out.tensor))  // the range of the map before its relayout
      it = producer_.find(ir_.ops[static_cast<size_t>(it->second)].inputs[0]);
    const schema::Activation act = it == producer_.end() ? schema::Activation_None : ir_.ops[static_cast<size_t>(it->second)].activation;
    if (act == schema::Activation_Tanh) { out.value_min = -1.f; out.value_max = 1.f; }
    if (act == schema::Activation_Sigmoid) { out.value_min = 0.f; out.value_max = 1.f; }
  }
  for (IrInput& in : ir_.inputs) {
    const IrTensor& t = ir_.tensors[static_cast<size_t>(in.tensor)];
    int64_t per_sample = 1;
    for (size_t k = 1; k < t.dims.size(); ++k) per_sample *= t.dims[k];
    if (t.is_int) {
      for (const IrOp& op : ir_.ops)
        if (op.kind == schema::OpKind_Embedding && op.inputs[0] == in.tensor) {
          in.role = schema::InputRole_Label;
          in.label_count = op.in_features;
        }
    } else if (t.nhwc && t.dims[1] * t.dims[2] > 1) {
      in.role = schema::InputRole_Image;
    } else if (image_output) {
      in.role = schema::InputRole_Noise;
      in.noise_size = per_sample;
    }
  }
}


IrModel lower_to_ir(const OnnxGraph& graph, const onnx::ModelProto& model) {
  const AnalysisPass a = graph.analyse(kBatchA);
  const AnalysisPass b = graph.analyse(kBatchB);
  // Groups folded into the batch (SwinIR's windows): the graph again with them after it.
  if (const std::optional<onnx::ModelProto> unfolded = unfold_batch_folds(model, a, b)) {
    const OnnxGraph g(*unfolded);
    const AnalysisPass ua = g.analyse(kBatchA);
    const AnalysisPass ub = g.analyse(kBatchB);
    check_batch_independence(g, ua, ub);
    return Lowering(g, ua).run();
  }
  check_batch_independence(graph, a, b);
  return Lowering(graph, a).run();
}

}  // namespace edgegan::converter
