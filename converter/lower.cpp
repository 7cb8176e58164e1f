#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "converter/egan_ir.h"
#include "converter/errors.h"

namespace edgegan::converter {
namespace {

// Batch sizes of the two analysis passes: any value works; distinct primes make an
// accidental match between a batch-dependent and a fixed dimension unlikely.
constexpr int64_t kBatchA = 3, kBatchB = 5;

bool is_activation_op(const std::string& op) { return op == "Relu" || op == "LeakyRelu" || op == "Tanh" || op == "Sigmoid"; }

class Lowering {
 public:
  Lowering(const OnnxGraph& g, const AnalysisPass& a) : g_(g), a_(a) {}

  IrModel run() {
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

    for (const GraphInput& in : g_.inputs()) {
      const int t = new_tensor(in.name, value(in.name));
      ir_.inputs.push_back({t, IrInputRole::kOther, 0, 0});
    }
    for (size_t i = 0; i < nodes.size(); ++i)
      if (!a_.folded[i]) lower(nodes[i]);
    finish_outputs();
    assign_roles();
    return std::move(ir_);
  }

 private:
  const Value& value(const std::string& name) const {
    const auto it = a_.values.find(name);
    if (it == a_.values.end()) throw ConvertError("tensor '" + name + "' is used but never defined");
    return it->second;
  }
  std::string resolve(const std::string& name) const {
    auto it = alias_.find(name);
    return it == alias_.end() ? name : it->second;
  }
  const ConstTensor& constant(const Node& n, size_t k) const { return value(n.inputs[k]).c; }
  bool has_input(const Node& n, size_t k) const { return k < n.inputs.size() && !n.inputs[k].empty(); }

  int new_tensor(const std::string& name, const Value& v) {
    IrTensor t;
    t.name = name;
    t.is_int = v.is_int;
    t.nhwc = v.shape.size() == 4;
    t.dims.push_back(-1);
    if (t.nhwc) t.dims.insert(t.dims.end(), {v.shape[2], v.shape[3], v.shape[1]});
    else t.dims.insert(t.dims.end(), v.shape.begin() + 1, v.shape.end());
    ir_.tensors.push_back(t);
    const int index = static_cast<int>(ir_.tensors.size()) - 1;
    tensor_of_[name] = index;
    return index;
  }

  int tensor(const Node& n, size_t k) const {
    const auto it = tensor_of_.find(resolve(n.inputs[k]));
    if (it == tensor_of_.end()) throw ConvertError(where(n) + ": input '" + n.inputs[k] + "' is not a run-time tensor");
    return it->second;
  }

  IrOp& add_op(IrOpKind kind, const Node& n, std::vector<int> inputs) {
    IrOp op;
    op.kind = kind;
    op.name = n.name;
    op.inputs = std::move(inputs);
    op.output = new_tensor(n.outputs[0], value(n.outputs[0]));
    ir_.ops.push_back(std::move(op));
    producer_[ir_.ops.back().output] = static_cast<int>(ir_.ops.size()) - 1;
    return ir_.ops.back();
  }

  // The op that produced input k of `n`, if `n` is its only reader (so it may absorb `n`).
  IrOp* fusable_producer(const Node& n, std::initializer_list<IrOpKind> kinds) {
    const std::string src = resolve(n.inputs[0]);
    const int t = tensor(n, 0);
    const auto it = producer_.find(t);
    if (it == producer_.end() || consumers_[src] != 1) return nullptr;
    IrOp& op = ir_.ops[static_cast<size_t>(it->second)];
    if (std::find(kinds.begin(), kinds.end(), op.kind) == kinds.end() || op.activation != cpu::Activation::kNone) return nullptr;
    return &op;
  }

  // `n` was absorbed by `op`: its output is the same tensor.
  void absorb(const Node& n, IrOp& op) {
    op.name += "+" + n.name;
    tensor_of_[n.outputs[0]] = op.output;
  }

  int64_t channel_count(const IrOp& op) const {
    switch (op.kind) {
      case IrOpKind::kConvTranspose:
      case IrOpKind::kConv: return op.geometry.out_channels;
      case IrOpKind::kDense: return op.out_features;
      default: return static_cast<int64_t>(op.bias.size());
    }
  }

  // W := W * scale[out channel]; bias := bias * scale + shift.
  void scale_and_shift(IrOp& op, const std::vector<float>& scale, const std::vector<float>& shift) {
    const int64_t c = channel_count(op);
    if (op.bias.empty()) op.bias.assign(static_cast<size_t>(c), 0.f);
    const int64_t total = static_cast<int64_t>(op.weights.size());
    for (int64_t k = 0; k < total; ++k) {
      int64_t ch = 0;
      if (op.kind == IrOpKind::kConvTranspose) ch = (k / (op.geometry.kernel_h * op.geometry.kernel_w)) % c;
      else if (op.kind == IrOpKind::kConv) ch = k / (op.geometry.in_channels * op.geometry.kernel_h * op.geometry.kernel_w);
      else ch = k % c;  // Dense [in][out]
      op.weights[static_cast<size_t>(k)] *= scale[static_cast<size_t>(ch)];
    }
    for (int64_t ch = 0; ch < c; ++ch)
      op.bias[static_cast<size_t>(ch)] = op.bias[static_cast<size_t>(ch)] * scale[static_cast<size_t>(ch)] + shift[static_cast<size_t>(ch)];
  }

  void lower(const Node& n) {
    const std::string& op = n.op;
    if (op == "Identity" || op == "Dropout") return;  // aliases
    if (op == "ConvTranspose" || op == "Conv") {
      const bool transpose = op == "ConvTranspose";
      const Value& x = value(resolve(n.inputs[0]));
      const ConstTensor& w = constant(n, 1);
      IrOp& o = add_op(transpose ? IrOpKind::kConvTranspose : IrOpKind::kConv, n, {tensor(n, 0)});
      o.geometry = transpose ? resolve_conv_transpose(n, x.shape, w.dims) : resolve_conv(n, x.shape, w.dims);
      o.weights = w.f;
      if (has_input(n, 2)) o.bias = constant(n, 2).f;
      if (!o.bias.empty() && static_cast<int64_t>(o.bias.size()) != o.geometry.out_channels)
        throw ConvertError(where(n) + ": bias must have one value per output channel");
    } else if (op == "Gemm" || op == "MatMul") {
      const ConstTensor& w = constant(n, 1);
      const bool tb = op == "Gemm" && attr_int(n, "transB", 0) != 0;
      const float alpha = op == "Gemm" ? attr_float(n, "alpha", 1.f) : 1.f;
      const float beta = op == "Gemm" ? attr_float(n, "beta", 1.f) : 1.f;
      IrOp& o = add_op(IrOpKind::kDense, n, {tensor(n, 0)});
      o.in_features = tb ? w.dims[1] : w.dims[0];
      o.out_features = tb ? w.dims[0] : w.dims[1];
      o.weights.resize(static_cast<size_t>(o.in_features * o.out_features));
      for (int64_t i = 0; i < o.in_features; ++i)
        for (int64_t j = 0; j < o.out_features; ++j)
          o.weights[static_cast<size_t>(i * o.out_features + j)] = alpha * w.f[static_cast<size_t>(tb ? j * o.in_features + i : i * o.out_features + j)];
      if (op == "Gemm" && has_input(n, 2)) {
        const ConstTensor& c = constant(n, 2);
        for (int64_t j = 0; j < o.out_features; ++j) o.bias.push_back(beta * static_cast<float>(c.at(c.numel() == 1 ? 0 : j)));
      }
    } else if (op == "Add") {
      const ConstTensor& c = constant(n, 1);
      const Value& x = value(resolve(n.inputs[0]));
      const int64_t channels = x.shape[1];
      std::vector<float> shift(static_cast<size_t>(channels));
      for (int64_t k = 0; k < channels; ++k) shift[static_cast<size_t>(k)] = static_cast<float>(c.at(c.numel() == 1 ? 0 : k));
      if (IrOp* p = fusable_producer(n, {IrOpKind::kDense, IrOpKind::kConv, IrOpKind::kConvTranspose})) {
        scale_and_shift(*p, std::vector<float>(static_cast<size_t>(channels), 1.f), shift);
        absorb(n, *p);
      } else {
        IrOp& o = add_op(IrOpKind::kChannelAffine, n, {tensor(n, 0)});
        o.weights.assign(static_cast<size_t>(channels), 1.f);
        o.bias = shift;
      }
    } else if (op == "BatchNormalization") {
      const Value& x = value(resolve(n.inputs[0]));
      if (x.shape.size() != 2 && x.shape.size() != 4) throw ConvertError(where(n) + ": BatchNorm on rank " + std::to_string(x.shape.size()) + " tensors is not supported");
      const float eps = attr_float(n, "epsilon", 1e-5f);
      const ConstTensor &gamma = constant(n, 1), &beta = constant(n, 2), &mean = constant(n, 3), &var = constant(n, 4);
      const size_t c = static_cast<size_t>(x.shape[1]);
      std::vector<float> scale(c), shift(c);
      for (size_t k = 0; k < c; ++k) {
        // In double, so the folded weights round once.
        const double s = gamma.at(static_cast<int64_t>(k)) / std::sqrt(var.at(static_cast<int64_t>(k)) + static_cast<double>(eps));
        scale[k] = static_cast<float>(s);
        shift[k] = static_cast<float>(beta.at(static_cast<int64_t>(k)) - mean.at(static_cast<int64_t>(k)) * s);
      }
      if (IrOp* p = fusable_producer(n, {IrOpKind::kConv, IrOpKind::kConvTranspose, IrOpKind::kDense})) {
        scale_and_shift(*p, scale, shift);
        absorb(n, *p);
        ir_.batchnorms_folded++;
      } else {
        IrOp& o = add_op(IrOpKind::kChannelAffine, n, {tensor(n, 0)});
        o.weights = scale;
        o.bias = shift;
      }
    } else if (is_activation_op(op)) {
      cpu::Activation act = op == "Relu" ? cpu::Activation::kRelu : op == "Tanh" ? cpu::Activation::kTanh
                          : op == "Sigmoid" ? cpu::Activation::kSigmoid : cpu::Activation::kLeakyRelu;
      const float alpha = op == "LeakyRelu" ? attr_float(n, "alpha", 0.01f) : 0.01f;
      if (IrOp* p = fusable_producer(n, {IrOpKind::kConv, IrOpKind::kConvTranspose, IrOpKind::kDense, IrOpKind::kChannelAffine})) {
        p->activation = act;
        p->alpha = alpha;
        absorb(n, *p);
        ir_.activations_fused++;
      } else {
        IrOp& o = add_op(IrOpKind::kElementwise, n, {tensor(n, 0)});
        o.activation = act;
        o.alpha = alpha;
      }
    } else if (op == "Reshape" || op == "Flatten" || op == "Unsqueeze" || op == "Squeeze") {
      const Value& x = value(resolve(n.inputs[0]));
      if (value(n.outputs[0]).shape == x.shape) {  // a no-op reshape
        tensor_of_[n.outputs[0]] = tensor(n, 0);
        return;
      }
      add_op(IrOpKind::kReshape, n, {tensor(n, 0)});
    } else if (op == "Concat") {
      std::vector<int> ins;
      for (size_t k = 0; k < n.inputs.size(); ++k) ins.push_back(tensor(n, k));
      const Value& x = value(resolve(n.inputs[0]));
      int64_t axis = attr_int(n, "axis", 0);
      if (axis < 0) axis += static_cast<int64_t>(x.shape.size());
      IrOp& o = add_op(IrOpKind::kConcat, n, ins);
      // NCHW axis -> NHWC storage axis.
      o.axis = static_cast<int>(x.shape.size() == 4 ? (axis == 1 ? 3 : axis - 1) : axis);
    } else if (op == "Gather") {
      const ConstTensor& table = constant(n, 0);
      IrOp& o = add_op(IrOpKind::kEmbedding, n, {tensor(n, 1)});
      o.in_features = table.dims[0];
      o.out_features = table.dims[1];
      o.weights = table.f;
    } else {
      throw ConvertError(where(n) + ": op '" + op + "' is not supported");
    }
  }

  void finish_outputs() {
    std::set<int> used;
    for (const auto& name : g_.outputs()) {
      const auto it = tensor_of_.find(resolve(name));
      if (it == tensor_of_.end()) throw ConvertError("graph output '" + name + "' is not computed by any supported op");
      const int t = it->second;
      for (const IrInput& in : ir_.inputs)
        if (in.tensor == t) throw ConvertError("graph output '" + name + "' is a graph input; nothing to compute");
      if (!used.insert(t).second) throw ConvertError("graph output '" + name + "' duplicates another output");
      if (ir_.tensors[static_cast<size_t>(t)].is_int) throw ConvertError("graph output '" + name + "' is an integer tensor");
      // The tensor takes the ONNX output's name, so `edgegan run` writes outputs by their ONNX names.
      for (auto& other : ir_.tensors)
        if (other.name == name) other.name += ":internal";
      ir_.tensors[static_cast<size_t>(t)].name = name;
      IrOutput out;
      out.tensor = t;
      ir_.outputs.push_back(out);
    }
  }

  void assign_roles() {
    bool image_output = false;
    for (IrOutput& out : ir_.outputs) {
      const IrTensor& t = ir_.tensors[static_cast<size_t>(out.tensor)];
      out.role = t.nhwc ? IrOutputRole::kImage : IrOutputRole::kScore;
      image_output = image_output || t.nhwc;
      const auto it = producer_.find(out.tensor);
      const cpu::Activation act = it == producer_.end() ? cpu::Activation::kNone : ir_.ops[static_cast<size_t>(it->second)].activation;
      if (act == cpu::Activation::kTanh) { out.value_min = -1.f; out.value_max = 1.f; }
      if (act == cpu::Activation::kSigmoid) { out.value_min = 0.f; out.value_max = 1.f; }
    }
    for (IrInput& in : ir_.inputs) {
      const IrTensor& t = ir_.tensors[static_cast<size_t>(in.tensor)];
      int64_t per_sample = 1;
      for (size_t k = 1; k < t.dims.size(); ++k) per_sample *= t.dims[k];
      if (t.is_int) {
        for (const IrOp& op : ir_.ops)
          if (op.kind == IrOpKind::kEmbedding && op.inputs[0] == in.tensor) {
            in.role = IrInputRole::kLabel;
            in.label_count = op.in_features;
          }
      } else if (t.nhwc && t.dims[1] * t.dims[2] > 1) {
        in.role = IrInputRole::kImage;
      } else if (image_output) {
        in.role = IrInputRole::kNoise;
        in.noise_size = per_sample;
      }
    }
  }

  const OnnxGraph& g_;
  const AnalysisPass& a_;
  IrModel ir_;
  std::map<std::string, std::string> alias_;
  std::map<std::string, int> consumers_;
  std::map<std::string, int> tensor_of_;
  std::map<int, int> producer_;  // tensor -> op
};

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

IrModel lower_to_ir(const OnnxGraph& graph) {
  const AnalysisPass a = graph.analyse(kBatchA);
  const AnalysisPass b = graph.analyse(kBatchB);
  check_batch_independence(graph, a, b);
  return Lowering(graph, a).run();
}

}  // namespace edgegan::converter
