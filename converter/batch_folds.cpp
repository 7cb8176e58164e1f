#include "converter/batch_folds.h"

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "converter/errors.h"

namespace edgegan::converter {
namespace {

// Ops computing each element from the same element of their inputs: a fold passes through.
const std::set<std::string> kElementwise = {"Relu", "LeakyRelu", "Sigmoid", "Tanh", "Erf",  "Sqrt",     "Exp",  "Log",      "Abs",  "Neg",     "Reciprocal",
                                            "Elu",  "Selu",      "Clip",    "HardSigmoid", "HardSwish", "Softplus", "Mish", "Gelu", "Identity", "Dropout"};
// Broadcasting binary ops.
const std::set<std::string> kBroadcasting = {"Add", "Sub", "Mul", "Div", "Pow", "PRelu"};
// Ops that reinterpret their input's elements in another shape: Reshapes to a constant target.
const std::set<std::string> kReshaping = {"Reshape", "Flatten", "Squeeze", "Unsqueeze"};
// Ops with one 'axis' attribute (their default when absent).
int64_t default_axis(const std::string& op, int64_t opset) {
  if (op == "Softmax" || op == "LogSoftmax") return opset < 13 ? 1 : -1;
  if (op == "LayerNormalization") return -1;
  return 0;  // Concat (required), Split, Gather
}
const std::set<std::string> kAxisOps = {"Softmax", "LogSoftmax", "Concat", "Split", "Gather", "LayerNormalization"};

constexpr int kMaxRank = 6;  // the engine's tensors

std::string node_text(const onnx::NodeProto& n) { return "node '" + (n.name().empty() ? n.op_type() : n.name()) + "' (" + n.op_type() + ")"; }

class Unfolder {
 public:
  Unfolder(onnx::ModelProto& m, const AnalysisPass& a, const AnalysisPass& b) : g_(*m.mutable_graph()), a_(a), b_(b) {
    for (const auto& o : m.opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx") opset_ = o.version();
  }

  void run() {
    for (const auto& o : g_.output())
      if (fold(o.name()) > 1)
        throw ConvertError("graph output '" + o.name() + "' holds the batch times " + std::to_string(fold(o.name())) +
                           " groups in its dimension 0 (windows folded into the batch); edgegan needs the batch alone there");
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    for (int i = 0; i < g_.node_size(); ++i) rewrite(*g_.mutable_node(i), nodes);
    g_.mutable_node()->Swap(&nodes);
  }

 private:
  // k of a run-time value whose dimension 0 is the batch times k at both batch sizes; 1
  // for any other value (the batch check reports one that is neither).
  int64_t fold(const std::string& name) const {
    const auto ia = a_.values.find(name), ib = b_.values.find(name);
    if (ia == a_.values.end() || ib == b_.values.end() || ia->second.is_const || ib->second.is_const) return 1;
    const auto &sa = ia->second.shape, &sb = ib->second.shape;
    if (sa.empty() || sb.empty() || sa[0] % a_.batch != 0 || sb[0] % b_.batch != 0) return 1;
    const int64_t k = sa[0] / a_.batch;
    return k > 1 && k == sb[0] / b_.batch ? k : 1;
  }
  bool runtime(const std::string& name) const {
    const auto it = a_.values.find(name);
    return !name.empty() && it != a_.values.end() && !it->second.is_const;
  }
  const Value& value(const std::string& name) const {
    const auto it = a_.values.find(name);
    if (it == a_.values.end()) throw ConvertError("tensor '" + name + "' is used but never defined");
    return it->second;
  }
  int64_t rank(const std::string& name) const { return static_cast<int64_t>(value(name).shape.size()); }
  // A rank-3 fold, [N·k, L, C], is stored [N, k·L, C].
  bool merged(const std::string& name) const { return fold(name) > 1 && rank(name) == 3; }

  // Dims after the batch of `name` unfolded.
  std::vector<int64_t> unfolded_rest(const onnx::NodeProto& n, const std::string& name) const {
    const std::vector<int64_t>& s = value(name).shape;
    const int64_t k = fold(name);
    if (k == 1) return {s.begin() + 1, s.end()};
    if (s.size() == 3) return {k * s[1], s[2]};
    if (static_cast<int>(s.size()) + 1 > kMaxRank)
      refuse(n, "its rank-" + std::to_string(s.size()) + " output, with the windows folded into the batch unfolded, would have rank " +
                    std::to_string(s.size() + 1) + " (at most " + std::to_string(kMaxRank) + ")");
    std::vector<int64_t> r{k};
    r.insert(r.end(), s.begin() + 1, s.end());
    return r;
  }

  [[noreturn]] void refuse(const onnx::NodeProto& n, const std::string& what) const { throw ConvertError(node_text(n) + ": " + what); }
  [[noreturn]] void unsupported(const onnx::NodeProto& n, int64_t k) const {
    refuse(n, "not supported on a tensor whose dimension 0 holds the batch times " + std::to_string(k) + " groups (windows folded into the batch)");
  }

  // ONNX axis `axis` of folded value `name`, in the unfolded value.
  int64_t axis_of(const onnx::NodeProto& n, const std::string& name, int64_t axis) const {
    const int64_t r = rank(name);
    if (axis < -r || axis >= r) refuse(n, "axis " + std::to_string(axis) + " is out of range");
    if (axis < 0) axis += r;
    if (axis == 0) refuse(n, "works along dimension 0, which holds the batch times " + std::to_string(fold(name)) + " windows");
    if (merged(name)) {
      if (axis == 1) refuse(n, "works along dimension 1 of tokens [N·k, L, C] whose k windows are stored with L");
      return axis;
    }
    return axis + 1;
  }

  std::string add_ints(const std::string& name, const std::vector<int64_t>& v) {
    auto* t = g_.add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(v.size()));
    for (int64_t x : v) t->add_int64_data(x);
    return name;
  }
  static void set_int_attr(onnx::NodeProto& n, const char* name, int64_t v) {
    for (auto& a : *n.mutable_attribute())
      if (a.name() == name) {
        a.set_i(v);
        return;
      }
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static const onnx::AttributeProto* find(const onnx::NodeProto& n, const char* name) {
    for (const auto& a : n.attribute())
      if (a.name() == name) return &a;
    return nullptr;
  }
  onnx::NodeProto* add_node(google::protobuf::RepeatedPtrField<onnx::NodeProto>& out, const std::string& op, const std::string& name,
                            std::vector<std::string> inputs, const std::string& output) {
    onnx::NodeProto* n = out.Add();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& i : inputs) n->add_input(i);
    n->add_output(output);
    return n;
  }

  // Every run-time input of n holds `k` (a fold cannot meet the plain batch: [N·k] against [N]).
  void same_fold(const onnx::NodeProto& n, int64_t k) const {
    for (const auto& i : n.input())
      if (runtime(i) && fold(i) != k) refuse(n, "combines a tensor holding the batch times " + std::to_string(k) + " groups in dimension 0 with one holding " + std::to_string(fold(i)));
  }

  void rewrite(onnx::NodeProto& n, google::protobuf::RepeatedPtrField<onnx::NodeProto>& out) {
    int64_t k = 1;
    std::string x;  // the first folded run-time input
    for (const auto& i : n.input())
      if (runtime(i) && fold(i) > 1 && k == 1) k = fold(i), x = i;
    bool output_folded = false;
    for (const auto& o : n.output()) output_folded = output_folded || (runtime(o) && fold(o) > 1);
    if (k == 1 && !output_folded) {
      out.Add()->Swap(&n);
      return;
    }
    const std::string& op = n.op_type();
    if (x.empty() && !kReshaping.count(op)) unsupported(n, fold(n.output(0)));
    const std::string base = n.output(0) + "/unfolded/";
    if (kReshaping.count(op)) {
      // The output's shape as a constant target; 0 copies the batch.
      if (!runtime(n.input(0))) unsupported(n, k);
      std::vector<int64_t> target{0};
      for (int64_t d : unfolded_rest(n, n.output(0))) target.push_back(d);
      const std::string data = n.input(0);
      n.set_op_type("Reshape");
      n.clear_attribute();
      n.clear_input();
      n.add_input(data);
      n.add_input(add_ints(base + "shape", target));
    } else if (op == "Shape") {
      // What torch computes from the folded shape still sees N·k: the unfolded shape's
      // first two entries multiplied (merged: N times k, L divided by k).
      const std::string s = base + "shape", full = base + "full";
      const int64_t start = find(n, "start") ? find(n, "start")->i() : 0;
      const int64_t end = find(n, "end") ? find(n, "end")->i() : rank(x);
      const std::string zero = add_ints(base + "0", {0}), one = add_ints(base + "1", {1}), two = add_ints(base + "2", {2}),
                        far = add_ints(base + "far", {kMaxRank + 1}), kk = add_ints(base + "k", {k});
      add_node(out, "Shape", n.name() + "/unfolded", {x}, s);
      add_node(out, "Slice", n.name() + "/s0", {s, zero, one}, base + "s0");
      add_node(out, "Slice", n.name() + "/s1", {s, one, two}, base + "s1");
      add_node(out, "Slice", n.name() + "/rest", {s, two, far}, base + "rest");
      if (merged(x)) {
        add_node(out, "Mul", n.name() + "/batch", {base + "s0", kk}, base + "batch");
        add_node(out, "Div", n.name() + "/tokens", {base + "s1", kk}, base + "tokens");
        set_int_attr(*add_node(out, "Concat", n.name() + "/full", {base + "batch", base + "tokens", base + "rest"}, full), "axis", 0);
      } else {
        add_node(out, "Mul", n.name() + "/batch", {base + "s0", base + "s1"}, base + "batch");
        set_int_attr(*add_node(out, "Concat", n.name() + "/full", {base + "batch", base + "rest"}, full), "axis", 0);
      }
      const std::string from = add_ints(base + "start", {start}), to = add_ints(base + "end", {end});
      add_node(out, "Slice", n.name(), {full, from, to}, n.output(0));
      return;
    } else if (kElementwise.count(op)) {
      same_fold(n, k);
    } else if (kBroadcasting.count(op)) {
      same_fold(n, k);
      const int64_t r = rank(x);
      for (const auto& i : n.input()) {
        if (runtime(i)) {
          if (rank(i) != r) refuse(n, "broadcasts run-time tensors of different ranks with windows folded into the batch");
          continue;
        }
        const std::vector<int64_t>& d = value(i).c.dims;
        const int64_t rc = static_cast<int64_t>(d.size());
        if (rc > r) refuse(n, "broadcasts a constant of a higher rank than the tensor with windows folded into the batch");
        // Aligned from the right: dimension 0 (the batch times k) must meet a 1, and so must
        // dimension 1 of merged tokens (stored with the k windows).
        if (rc == r && d[0] != 1) refuse(n, "its constant varies along dimension 0, which holds the batch times " + std::to_string(k) + " windows");
        if (merged(x) && rc >= 2 && d[static_cast<size_t>(rc - 2)] != 1)
          refuse(n, "its constant varies along dimension 1 of tokens [N·k, L, C] whose k windows are stored with L");
      }
    } else if (op == "MatMul") {
      same_fold(n, k);
      if (runtime(n.input(1))) {
        if (!runtime(n.input(0))) unsupported(n, k);
        if (merged(n.input(0))) refuse(n, "a product of two rank-3 tensors with windows folded into the batch is not supported");
      } else if (!runtime(n.input(0))) {
        unsupported(n, k);
      }
    } else if (op == "Transpose") {
      const auto* p = find(n, "perm");
      if (!p) refuse(n, "a Transpose without 'perm' moves dimension 0, which holds the batch times " + std::to_string(k) + " windows");
      std::vector<int64_t> perm(p->ints().begin(), p->ints().end());
      if (perm.empty() || perm[0] != 0) refuse(n, "moves dimension 0, which holds the batch times " + std::to_string(k) + " windows");
      std::vector<int64_t> unfolded{0};
      if (merged(x)) {
        if (perm.size() > 1 && perm[1] != 1) refuse(n, "moves dimension 1 of tokens [N·k, L, C] whose k windows are stored with L");
        unfolded = perm;
      } else {
        unfolded.push_back(1);
        for (size_t d = 1; d < perm.size(); ++d) unfolded.push_back(perm[d] + 1);
      }
      n.clear_attribute();
      auto* a = n.add_attribute();
      a->set_name("perm");
      a->set_type(onnx::AttributeProto::INTS);
      for (int64_t v : unfolded) a->add_ints(v);
    } else if (kAxisOps.count(op)) {
      same_fold(n, k);
      if (op == "Concat")
        for (const auto& i : n.input())
          if (!runtime(i)) refuse(n, "concatenates a constant with a tensor with windows folded into the batch");
      const auto* a = find(n, "axis");
      set_int_attr(n, "axis", axis_of(n, x, a ? a->i() : default_axis(op, opset_)));
    } else if (op.rfind("Reduce", 0) == 0) {
      std::vector<int64_t> axes;
      const bool input = n.input_size() > 1 && !n.input(1).empty();
      if (input) {
        const Value& v = value(n.input(1));
        if (!v.is_const || !v.c.is_int) unsupported(n, k);
        axes = v.c.i;
      } else if (const auto* a = find(n, "axes")) {
        axes.assign(a->ints().begin(), a->ints().end());
      }
      if (axes.empty()) refuse(n, "reduces every axis, dimension 0 (the batch times " + std::to_string(k) + " windows) among them");
      for (auto& ax : axes) ax = axis_of(n, x, ax);
      if (input) {
        n.set_input(1, add_ints(base + "axes", axes));
      } else {
        for (auto& a : *n.mutable_attribute())
          if (a.name() == "axes") {
            a.clear_ints();
            for (int64_t v : axes) a.add_ints(v);
          }
      }
    } else if (op == "Slice") {
      if (n.input_size() < 4 || n.input(3).empty()) refuse(n, "slices without axes, so along dimension 0 (the batch times " + std::to_string(k) + " windows)");
      const Value& v = value(n.input(3));
      if (!v.is_const || !v.c.is_int) unsupported(n, k);
      std::vector<int64_t> axes = v.c.i;
      for (auto& ax : axes) ax = axis_of(n, x, ax);
      n.set_input(3, add_ints(base + "axes", axes));
    } else {
      unsupported(n, k);
    }
    out.Add()->Swap(&n);
  }

  onnx::GraphProto& g_;
  const AnalysisPass& a_;
  const AnalysisPass& b_;
  int64_t opset_ = 0;
};

}  // namespace

std::optional<onnx::ModelProto> unfold_batch_folds(const onnx::ModelProto& model, const AnalysisPass& a, const AnalysisPass& b) {
  bool any = false;
  for (const auto& [name, va] : a.values) {
    if (va.is_const || va.shape.empty() || va.shape[0] == a.batch) continue;
    const auto vb = b.values.find(name);
    if (vb == b.values.end() || vb->second.is_const || vb->second.shape.empty()) continue;
    const int64_t sa = va.shape[0], sb = vb->second.shape[0];
    any = any || (sa % a.batch == 0 && sb % b.batch == 0 && sa / a.batch > 1 && sa / a.batch == sb / b.batch);
  }
  if (!any) return std::nullopt;
  std::optional<onnx::ModelProto> out(model);
  Unfolder(*out, a, b).run();
  return out;
}

}  // namespace edgegan::converter
