#include "converter/window_patterns.h"

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "converter/const_tensor.h"
#include "converter/errors.h"

namespace edgegan::converter {
namespace {

const onnx::AttributeProto* attr(const onnx::NodeProto& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

// How many times each value is read, in the graph and in any subgraph (an If's branches).
void count_reads(const onnx::GraphProto& g, std::map<std::string, int>& reads) {
  for (const auto& n : g.node()) {
    for (const auto& i : n.input()) ++reads[i];
    for (const auto& a : n.attribute()) {
      if (a.has_g()) count_reads(a.g(), reads);
      for (const auto& sub : a.graphs()) count_reads(sub, reads);
    }
  }
}

class WindowPatterns {
 public:
  explicit WindowPatterns(onnx::ModelProto& m) : g_(*m.mutable_graph()) {
    for (const auto& o : m.opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx") opset_ = o.version();
    for (const auto& i : g_.initializer()) inits_[i.name()] = &i;
    for (const auto& o : g_.output()) outputs_.insert(o.name());
    for (int k = 0; k < g_.node_size(); ++k)
      for (const auto& o : g_.node(k).output()) producer_[o] = k;
    count_reads(g_, reads_);
  }

  int run() {
    int rewritten = 0;
    for (int k = 0; k < g_.node_size(); ++k)
      if (g_.node(k).op_type() == "Transpose") rewritten += gathered_transpose(k);
    if (rewritten) apply();
    return rewritten;
  }

 private:
  // A constant scalar integer (an initializer or a Constant node's value), or nullopt.
  std::optional<int64_t> scalar_int(const std::string& name) const {
    const std::optional<ConstTensor> c = constant(name);
    if (!c || !c->is_int || !c->dims.empty() || c->i.size() != 1) return std::nullopt;
    return c->i[0];
  }
  // The integers of a constant 1-D tensor, or nullopt.
  std::optional<std::vector<int64_t>> ints(const std::string& name) const {
    const std::optional<ConstTensor> c = constant(name);
    if (!c || !c->is_int || c->dims.size() != 1) return std::nullopt;
    return c->i;
  }
  std::optional<ConstTensor> constant(const std::string& name) const {
    ConstTensor c;
    try {
      if (const auto it = inits_.find(name); it != inits_.end()) {
        c = decode_tensor(*it->second, name);
      } else if (const auto p = producer_.find(name); p != producer_.end() && g_.node(p->second).op_type() == "Constant") {
        const onnx::NodeProto& n = g_.node(p->second);
        if (const auto* v = attr(n, "value")) c = decode_tensor(v->t(), name);
        else if (const auto* vi = attr(n, "value_int")) c = ConstTensor::ints({vi->i()}, {});
        else return std::nullopt;
      } else {
        return std::nullopt;
      }
    } catch (const ConvertError&) {
      return std::nullopt;  // not a pattern; the analysis reports the bad constant
    }
    return c;
  }

  // Transpose(x, perm) with perm[0] = a != 0, read only by Gather(·, i, axis 0) with a
  // constant scalar i: each Gather becomes Transpose(Squeeze(Slice(x, i, axis a), a), perm')
  // where perm' is perm without its first entry, renumbered past the removed axis a.
  int gathered_transpose(int k) {
    const onnx::NodeProto& t = g_.node(k);
    const auto* perm_attr = attr(t, "perm");
    if (!perm_attr || t.input_size() != 1 || t.output_size() != 1) return 0;
    const std::vector<int64_t> perm(perm_attr->ints().begin(), perm_attr->ints().end());
    const int64_t rank = static_cast<int64_t>(perm.size());
    if (rank < 2 || perm[0] <= 0 || perm[0] >= rank) return 0;
    std::set<int64_t> seen(perm.begin(), perm.end());
    if (static_cast<int64_t>(seen.size()) != rank || *seen.begin() != 0 || *seen.rbegin() != rank - 1) return 0;
    const std::string& y = t.output(0);
    if (outputs_.count(y)) return 0;
    std::vector<std::pair<int, int64_t>> gathers;  // node, index
    for (int r = 0; r < g_.node_size(); ++r) {
      const onnx::NodeProto& n = g_.node(r);
      bool reads = false;
      for (const auto& i : n.input()) reads = reads || i == y;
      if (!reads) continue;
      if (n.op_type() == "Split" && reads_[y] == 1) return split_transpose(k, r, perm);
      if (n.op_type() != "Gather" || n.input_size() != 2 || n.input(0) != y || n.input(1) == y || n.output_size() != 1) return 0;
      const auto* axis = attr(n, "axis");
      if (axis && axis->i() != 0) return 0;
      const std::optional<int64_t> index = scalar_int(n.input(1));
      if (!index || *index < -(int64_t{1} << 31) || *index >= (int64_t{1} << 31)) return 0;
      gathers.push_back({r, *index});
    }
    // Every read of y is one of these Gathers (none from a subgraph).
    if (gathers.empty() || reads_[y] != static_cast<int>(gathers.size())) return 0;
    const int64_t a = perm[0];
    std::vector<int64_t> rest;
    for (int64_t d = 1; d < rank; ++d) rest.push_back(perm[static_cast<size_t>(d)] - (perm[static_cast<size_t>(d)] > a ? 1 : 0));
    removed_.insert(k);
    for (const auto& [r, index] : gathers) replacement_[r] = {t.input(0), a, index, rest};
    return 1;
  }

  // qkv.unbind(0): the Transpose read only by a Split of its axis 0 into pieces of 1, each
  // read only by a Squeeze of axis 0; each Squeeze becomes the Slice, Squeeze and
  // Transpose a Gather of that index becomes, and the Split goes.
  int split_transpose(int k, int s, const std::vector<int64_t>& perm) {
    const onnx::NodeProto& split = g_.node(s);
    const auto* axis = attr(split, "axis");
    if ((axis && axis->i() != 0) || split.input_size() < 1 || split.input(0) != g_.node(k).output(0)) return 0;
    std::vector<int64_t> sizes;
    if (split.input_size() > 1 && !split.input(1).empty()) {
      const auto v = ints(split.input(1));
      if (!v) return 0;
      sizes = *v;
    } else if (const auto* a = attr(split, "split")) {
      sizes.assign(a->ints().begin(), a->ints().end());
    }
    if (sizes.size() != static_cast<size_t>(split.output_size())) return 0;
    for (int64_t v : sizes)
      if (v != 1) return 0;
    std::vector<std::pair<int, int64_t>> squeezes;
    for (int j = 0; j < split.output_size(); ++j) {
      const std::string& piece = split.output(j);
      if (outputs_.count(piece) || reads_[piece] != 1) return 0;
      int reader = -1;
      for (int r = 0; r < g_.node_size(); ++r)
        for (const auto& i : g_.node(r).input())
          if (i == piece) reader = r;
      if (reader < 0) return 0;
      const onnx::NodeProto& q = g_.node(reader);
      if (q.op_type() != "Squeeze" || q.input(0) != piece || q.output_size() != 1) return 0;
      std::vector<int64_t> axes;
      if (q.input_size() > 1 && !q.input(1).empty()) {
        const auto v = ints(q.input(1));
        if (!v) return 0;
        axes = *v;
      } else if (const auto* a = attr(q, "axes")) {
        axes.assign(a->ints().begin(), a->ints().end());
      }
      if (axes != std::vector<int64_t>{0}) return 0;
      squeezes.push_back({reader, j});
    }
    const int64_t a = perm[0];
    std::vector<int64_t> rest;
    for (size_t d = 1; d < perm.size(); ++d) rest.push_back(perm[d] - (perm[d] > a ? 1 : 0));
    removed_.insert(k);
    removed_.insert(s);
    for (const auto& [r, index] : squeezes) replacement_[r] = {g_.node(k).input(0), a, index, rest};
    return 1;
  }

  struct Replacement {
    std::string x;
    int64_t axis = 0, index = 0;
    std::vector<int64_t> perm;
  };

  void add_ints(const std::string& name, const std::vector<int64_t>& v) {
    auto* t = g_.add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(v.size()));
    for (int64_t x : v) t->add_int64_data(x);
  }

  // The node list with each removed Transpose dropped and each Gather replaced, in place.
  void apply() {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    for (int k = 0; k < g_.node_size(); ++k) {
      if (removed_.count(k)) continue;
      const auto it = replacement_.find(k);
      if (it == replacement_.end()) {
        nodes.Add()->Swap(g_.mutable_node(k));
        continue;
      }
      const Replacement& r = it->second;
      const onnx::NodeProto& gather = g_.node(k);  // a Gather, or the Squeeze of a Split's piece
      const std::string y = gather.output(0), base = y + "/window_gather/";
      const int64_t end = r.index == -1 ? std::numeric_limits<int64_t>::max() : r.index + 1;
      add_ints(base + "starts", {r.index});
      add_ints(base + "ends", {end});
      add_ints(base + "axes", {r.axis});
      onnx::NodeProto* slice = nodes.Add();
      slice->set_op_type("Slice");
      slice->set_name(gather.name() + "/slice");
      slice->add_input(r.x);
      for (const char* in : {"starts", "ends", "axes"}) slice->add_input(base + in);
      slice->add_output(base + "sliced");
      onnx::NodeProto* squeeze = nodes.Add();
      squeeze->set_op_type("Squeeze");
      squeeze->set_name(gather.name() + "/squeeze");
      squeeze->add_input(base + "sliced");
      if (opset_ >= 13) {
        squeeze->add_input(base + "axes");
      } else {
        auto* axes = squeeze->add_attribute();
        axes->set_name("axes");
        axes->set_type(onnx::AttributeProto::INTS);
        axes->add_ints(r.axis);
      }
      squeeze->add_output(base + "squeezed");
      onnx::NodeProto* transpose = nodes.Add();
      transpose->set_op_type("Transpose");
      transpose->set_name(gather.name() + "/transpose");
      transpose->add_input(base + "squeezed");
      transpose->add_output(y);
      auto* perm = transpose->add_attribute();
      perm->set_name("perm");
      perm->set_type(onnx::AttributeProto::INTS);
      for (int64_t p : r.perm) perm->add_ints(p);
    }
    g_.mutable_node()->Swap(&nodes);
  }

  onnx::GraphProto& g_;
  int64_t opset_ = 0;
  std::map<std::string, const onnx::TensorProto*> inits_;
  std::set<std::string> outputs_;
  std::map<std::string, int> producer_, reads_;
  std::set<int> removed_;
  std::map<int, Replacement> replacement_;
};

}  // namespace

int rewrite_window_patterns(onnx::ModelProto& model) { return WindowPatterns(model).run(); }

bool may_hold_window_patterns(const onnx::ModelProto& model) {
  std::set<std::string> transposed;
  for (const auto& n : model.graph().node())
    if (n.op_type() == "Transpose" && n.output_size() == 1) transposed.insert(n.output(0));
  for (const auto& n : model.graph().node())
    if ((n.op_type() == "Gather" || n.op_type() == "Split") && n.input_size() > 0 && transposed.count(n.input(0))) return true;
  return false;
}

}  // namespace edgegan::converter
