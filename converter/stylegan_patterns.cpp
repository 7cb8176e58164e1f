#include "converter/stylegan_patterns.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "converter/const_tensor.h"
#include "converter/onnx_graph.h"

namespace edgegan::converter {
namespace {

using Names = std::vector<std::string>;

// Bounds that keep the pattern arithmetic far from overflow on any file: a larger export
// batch, shape factor or pad is no pattern.
constexpr int64_t kMaxBatch = 1 << 16, kMaxFactor = 1 << 20, kMaxPad = 1 << 20;

const onnx::AttributeProto* attr(const onnx::NodeProto& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}
int64_t attr_i(const onnx::NodeProto& n, const char* name, int64_t fallback) {
  const auto* a = attr(n, name);
  return a ? a->i() : fallback;
}
std::vector<int64_t> attr_is(const onnx::NodeProto& n, const char* name) {
  const auto* a = attr(n, name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::vector<int64_t>{};
}
std::string input_of(const onnx::NodeProto& n, int k) { return k < n.input_size() ? n.input(k) : std::string(); }

// The graph's nodes, who produces and who reads each value, and a small constant folder
// for the shape arithmetic torch writes around these patterns (pads, reshape targets).
class Patterns {
 public:
  explicit Patterns(onnx::ModelProto& m) : g_(*m.mutable_graph()) {
    for (const auto& i : g_.initializer()) inits_[i.name()] = &i;
    for (const auto& o : g_.output()) outputs_.insert(o.name());
    opset_ = 0;
    for (const auto& o : m.opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx") opset_ = o.version();
    batch_ = fixed_batch();
    index();
  }

  int run() {
    if (batch_ < 1) return 0;  // a dynamic batch: torch wrote none of these fixed-batch forms
    int rewritten = 0;
    for (int k = 0; k < g_.node_size(); ++k) {
      const onnx::NodeProto& n = g_.node(k);  // the list changes only in apply()
      if (n.op_type() == "ReduceSum") rewritten += demodulation_sums(k, n);
      else if (n.op_type() == "Conv" || n.op_type() == "ConvTranspose") rewritten += fused_modulated_conv(k, n) + upfirdn(k, n);
      else if (n.op_type() == "Tile") rewritten += one_sample_constant(n);
      else if (n.op_type() == "Reshape") rewritten += upfirdn_channels_in_batch(k, n);
    }
    if (rewritten == 0) return 0;
    apply();
    for (int k = 0; k < g_.node_size(); ++k)
      if (g_.node(k).op_type() == "Reshape") batch_copying_reshape(*g_.mutable_node(k));
    remove_dead_nodes();
    return rewritten;
  }

 private:
  // ---- the graph
  void index() {
    producer_.clear();
    readers_.clear();
    for (int k = 0; k < g_.node_size(); ++k) {
      for (const auto& o : g_.node(k).output()) producer_[o] = k;
      for (const auto& i : g_.node(k).input()) ++readers_[i];
    }
  }
  const onnx::NodeProto* made_by(const std::string& value, const char* op) const {
    const auto it = producer_.find(value);
    if (it == producer_.end() || g_.node(it->second).op_type() != op) return nullptr;
    return &g_.node(it->second);
  }
  // Made by `op` and read only by one node (so the pattern may drop it).
  const onnx::NodeProto* only_made_by(const std::string& value, const char* op) const {
    const auto* n = made_by(value, op);
    const auto it = readers_.find(value);
    return n && it != readers_.end() && it->second == 1 && !outputs_.count(value) ? n : nullptr;
  }
  // The batch all graph inputs are declared with (torch's export without dynamic axes), or 0.
  int64_t fixed_batch() const {
    const int64_t b = declared_batch(g_);
    return b <= kMaxBatch ? b : 0;
  }

  // ---- constants
  std::optional<ConstTensor> fold(const std::string& name) {
    if (name.empty()) return std::nullopt;
    if (const auto it = folded_.find(name); it != folded_.end()) return it->second;
    // A hostile graph may feed a node its own output or chain folds deeper than any
    // export does: entered names count as "not constant" until they are folded, and
    // past kMaxFoldDepth nested folds nothing is a constant (no pattern, no overflow).
    if (fold_depth_ >= kMaxFoldDepth) return std::nullopt;
    folded_[name] = std::nullopt;
    ++fold_depth_;
    std::optional<ConstTensor> r;
    try {
      r = fold_uncached(name);
    } catch (const std::exception&) {
      r = std::nullopt;  // not a constant this folder understands: no pattern
    }
    --fold_depth_;
    folded_[name] = r;
    return r;
  }
  std::optional<ConstTensor> fold_uncached(const std::string& name) {
    if (const auto it = inits_.find(name); it != inits_.end()) return decode_tensor(*it->second, name);
    const auto p = producer_.find(name);
    if (p == producer_.end()) return std::nullopt;
    const onnx::NodeProto& n = g_.node(p->second);
    const std::string& op = n.op_type();
    if (op == "Constant") {
      if (const auto* a = attr(n, "value")) return decode_tensor(a->t(), name);
      if (const auto* a = attr(n, "value_ints")) return ConstTensor::ints({a->ints().begin(), a->ints().end()}, {a->ints_size()});
      if (const auto* a = attr(n, "value_int")) return ConstTensor::ints({a->i()}, {});
      if (const auto* a = attr(n, "value_float")) return ConstTensor::floats({a->f()}, {});
      return std::nullopt;
    }
    static const std::set<std::string> kFolded = {"ConstantOfShape", "Concat", "Reshape", "Slice", "Transpose", "Cast", "Expand", "Unsqueeze", "Tile"};
    if (!kFolded.count(op)) return std::nullopt;
    std::vector<ConstTensor> in;
    for (const auto& i : n.input()) {
      if (i.empty()) break;
      auto c = fold(i);
      if (!c) return std::nullopt;
      in.push_back(std::move(*c));
    }
    if (in.empty()) return std::nullopt;
    if (op == "ConstantOfShape") {
      ConstTensor v = ConstTensor::floats({0.f}, {1});
      if (const auto* a = attr(n, "value")) v = decode_tensor(a->t(), name);
      std::vector<int64_t> dims = in[0].i;
      const int64_t count = checked_numel(dims, kMaxFoldedElements, name);
      if (v.is_int) return ConstTensor::ints(std::vector<int64_t>(static_cast<size_t>(count), v.i.at(0)), dims);
      return ConstTensor::floats(std::vector<float>(static_cast<size_t>(count), v.f.at(0)), dims);
    }
    if (op == "Concat") {
      std::vector<const ConstTensor*> parts;
      for (const auto& c : in) parts.push_back(&c);
      return concat(parts, attr_i(n, "axis", 0), name);
    }
    if (op == "Reshape" && in.size() == 2) {
      ConstTensor c = in[0];
      std::vector<int64_t> dims = in[1].i;
      int64_t known = 1, unknown = -1;
      for (size_t k = 0; k < dims.size(); ++k) {
        if (dims[k] == 0) dims[k] = c.dims.at(k);
        if (dims[k] == -1 && unknown < 0) unknown = static_cast<int64_t>(k);
        else if (dims[k] < 0 || __builtin_mul_overflow(known, dims[k], &known)) return std::nullopt;  // no shape torch writes
      }
      if (unknown >= 0) dims[static_cast<size_t>(unknown)] = known ? c.numel() / known : 0;
      if (checked_numel(dims, kMaxFoldedElements, name) != c.numel()) return std::nullopt;
      c.dims = dims;
      return c;
    }
    if (op == "Slice" && in.size() >= 3) {
      const std::vector<int64_t> axes = in.size() > 3 ? in[3].i : std::vector<int64_t>{};
      const std::vector<int64_t> steps = in.size() > 4 ? in[4].i : std::vector<int64_t>{};
      return slice(in[0], in[1].i, in[2].i, axes, steps, name);
    }
    if (op == "Transpose") return transpose(in[0], attr_is(n, "perm"), name);
    if (op == "Cast") return cast(in[0], attr_i(n, "to", 1) == onnx::TensorProto::INT64 || attr_i(n, "to", 1) == onnx::TensorProto::INT32);
    if (op == "Unsqueeze") {
      std::vector<int64_t> axes = opset_ >= 13 ? (in.size() == 2 ? in[1].i : std::vector<int64_t>{}) : attr_is(n, "axes");
      ConstTensor c = in[0];
      const int64_t rank = static_cast<int64_t>(c.dims.size() + axes.size());
      for (int64_t& a : axes) a = a < 0 ? a + rank : a;
      std::sort(axes.begin(), axes.end());
      for (int64_t a : axes) {
        if (a < 0 || a > static_cast<int64_t>(c.dims.size())) return std::nullopt;
        c.dims.insert(c.dims.begin() + a, 1);
      }
      return c;
    }
    if (op == "Tile" && in.size() == 2 && !in[0].is_int && in[1].i.size() == in[0].dims.size()) {
      // Each axis from the last: the block of the axes after it repeated in place.
      ConstTensor c = in[0];
      for (size_t a = c.dims.size(); a-- > 0;) {
        const int64_t reps = in[1].i[a];
        if (reps < 1 || reps > kMaxFoldedElements || c.numel() == 0) return std::nullopt;
        std::vector<int64_t> dims = c.dims;
        dims[a] *= reps;
        checked_numel(dims, kMaxFoldedElements, name);
        const int64_t outer = product_of(c.dims, 0, a), block = product_of(c.dims, a, c.dims.size());
        std::vector<float> f;
        f.reserve(static_cast<size_t>(outer * block * reps));
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t r = 0; r < reps; ++r) f.insert(f.end(), c.f.begin() + o * block, c.f.begin() + (o + 1) * block);
        c = ConstTensor::floats(std::move(f), dims);
      }
      return c;
    }
    if (op == "Expand" && in.size() == 2) {
      const int64_t count = checked_numel(in[1].i, kMaxFoldedElements, name);
      return broadcast_binary("Mul", in[0], ConstTensor::floats(std::vector<float>(static_cast<size_t>(count), 1.f), in[1].i), name);
    }
    return std::nullopt;
  }
  static int64_t product_of(const std::vector<int64_t>& dims, size_t from, size_t to) {
    int64_t p = 1;
    for (size_t k = from; k < to; ++k) p *= dims[k];
    return p;
  }
  std::vector<int64_t> ints_or_empty(const std::string& name) {
    const auto c = fold(name);
    return c && c->is_int ? c->i : std::vector<int64_t>{};
  }

  // ---- shape vectors torch computes from a tensor's Shape: each entry a constant or
  // `mul` times dimension `axis` of tensor `of`.
  struct Dim {
    std::string of;
    int64_t axis = 0, mul = 1, value = 0;
    int64_t times_axis = -1;  // >= 0: also times dimension times_axis of `of` (batch x channels)
  };
  std::optional<std::vector<Dim>> dims_of(const std::string& name, int depth = 0) {
    if (depth > 8) return std::nullopt;
    if (const auto c = fold(name)) {
      if (!c->is_int) return std::nullopt;
      std::vector<Dim> d;
      for (int64_t v : c->i) d.push_back(Dim{"", 0, 1, v});
      return d;
    }
    const auto p = producer_.find(name);
    if (p == producer_.end()) return std::nullopt;
    const onnx::NodeProto& n = g_.node(p->second);
    const std::string& op = n.op_type();
    if (op == "Gather") {
      const auto* shape = made_by(input_of(n, 0), "Shape");
      const auto k = fold(input_of(n, 1));
      if (!shape || attr(*shape, "start") || attr(*shape, "end") || !k || !k->is_int || k->numel() != 1 || k->i[0] < 0) return std::nullopt;
      return std::vector<Dim>{Dim{input_of(*shape, 0), k->i[0], 1, 0}};
    }
    if (op == "Unsqueeze" || op == "Cast") return dims_of(input_of(n, 0), depth + 1);
    if (op == "Add" || op == "Sub") {  // x - 0: the crop ends torch writes for pads that are not negative
      const auto zero = fold(input_of(n, 1));
      if (zero && zero->numel() == 1 && zero->at(0) == 0.0) return dims_of(input_of(n, 0), depth + 1);
      return std::nullopt;
    }
    if (op == "Concat") {
      std::vector<Dim> all;
      for (const auto& i : n.input()) {
        const auto d = dims_of(i, depth + 1);
        if (!d) return std::nullopt;
        all.insert(all.end(), d->begin(), d->end());
      }
      return all;
    }
    if (op == "Mul") {
      const auto a = dims_of(input_of(n, 0), depth + 1), b = dims_of(input_of(n, 1), depth + 1);
      if (a && b && a->size() == 1 && b->size() == 1 && !(*a)[0].of.empty() && (*a)[0].of == (*b)[0].of && (*a)[0].times_axis < 0 &&
          (*b)[0].times_axis < 0) {
        if ((*a)[0].mul > kMaxFactor || (*b)[0].mul > kMaxFactor) return std::nullopt;
        Dim d = (*a)[0];  // dim(axis) * dim(axis'): torch's batch * in_channels
        d.times_axis = (*b)[0].axis;
        d.mul *= (*b)[0].mul;
        return std::vector<Dim>{d};
      }
      for (int side : {0, 1}) {
        const auto c = fold(input_of(n, side));
        auto d = dims_of(input_of(n, 1 - side), depth + 1);
        if (!c || !c->is_int || c->numel() != 1 || !d || d->size() != 1 || c->i[0] < 0 || c->i[0] > kMaxFactor) continue;
        Dim& x = (*d)[0];
        if ((x.of.empty() ? x.value : x.mul) < -kMaxFactor || (x.of.empty() ? x.value : x.mul) > kMaxFactor) return std::nullopt;
        if (x.of.empty()) x.value *= c->i[0];
        else x.mul *= c->i[0];
        return d;
      }
    }
    return std::nullopt;
  }
  // Entry `e` of a reshape target is dimension `axis` of `x` (times `mul`), `known` (a
  // constant, when torch wrote one), or for the batch 0 (copy) or the export batch.
  bool is_dim(const Dim& e, const std::string& x, int64_t axis, int64_t mul, std::optional<int64_t> known) const {
    if (!e.of.empty()) return e.of == x && e.axis == axis && e.mul == mul && e.times_axis < 0;
    if (axis == 0 && (e.value == 0 || e.value == batch_)) return true;
    int64_t value = 0;
    return known && *known >= 0 && *known <= kMaxFactor && !__builtin_mul_overflow(*known, mul, &value) && e.value == value;
  }

  // A reshape target's entry that is `mul` times the batch: the export batch times mul,
  // 0 (copy, for mul 1), -1 (the one inferred entry), or a batch torch read from a shape.
  bool is_batch(const Dim& d, int64_t mul) const {
    if (!d.of.empty()) return d.axis == 0 && d.mul == mul && d.times_axis < 0;
    return d.value == batch_ * mul || d.value == -1 || (mul == 1 && d.value == 0);
  }

  // ---- building nodes
  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int k = 1; producer_.count(name) || inits_.count(name) || made_.count(name); ++k) name = base + "_" + std::to_string(k);
    made_.insert(name);
    return name;
  }
  std::string add_initializer(const std::string& base, const ConstTensor& c) {
    const std::string name = fresh(base);
    onnx::TensorProto* t = g_.add_initializer();
    t->set_name(name);
    for (int64_t d : c.dims) t->add_dims(d);
    if (c.is_int) {
      t->set_data_type(onnx::TensorProto::INT64);
      for (int64_t v : c.i) t->add_int64_data(v);
    } else {
      t->set_data_type(onnx::TensorProto::FLOAT);
      for (float v : c.f) t->add_float_data(v);
    }
    inits_[name] = t;
    return name;
  }
  onnx::NodeProto node(const char* op, const Names& inputs, const std::string& output, const std::string& base) {
    onnx::NodeProto n;
    n.set_op_type(op);
    n.set_name(fresh(base + "/" + op));
    for (const auto& i : inputs) n.add_input(i);
    n.add_output(output);
    return n;
  }
  // x of rank 2 [N, C] as [N, C, 1, 1].
  onnx::NodeProto unsqueeze23(const std::string& x, const std::string& out, const std::string& base) {
    if (opset_ >= 13) return node("Unsqueeze", {x, add_initializer(base + "/axes", ConstTensor::ints({2, 3}, {2}))}, out, base);
    onnx::NodeProto n = node("Unsqueeze", {x}, out, base);
    auto* a = n.add_attribute();
    a->set_name("axes");
    a->set_type(onnx::AttributeProto::INTS);
    a->add_ints(2);
    a->add_ints(3);
    return n;
  }

  // ---- the patterns
  // `value` is `from` [N, C] (rank 2) unsqueezed or reshaped to `want` ('N', 'C', '1' per
  // axis); returns `from`'s name, or "".
  std::string chain_from_rank2(const std::string& value, const std::string& want, int64_t c) {
    std::string cur = value;
    std::vector<std::string> unsqueezes;
    if (const auto* r = made_by(cur, "Reshape")) {
      const auto t = dims_of(input_of(*r, 1));
      if (!t || t->size() != want.size()) return "";
      for (size_t k = 0; k < t->size(); ++k) {
        const Dim& d = (*t)[k];
        // 'C' may be read from a shape: the reshape of [N, C] keeps C whatever it is named.
        const bool ok = want[k] == 'N'   ? is_batch(d, 1)
                        : want[k] == '1' ? d.of.empty() && d.value == 1
                                         : (d.of.empty() ? (d.value == c || d.value == -1) : d.mul == 1 && d.times_axis < 0);
        if (!ok) return "";
      }
      return input_of(*r, 0);
    }
    std::string tags = want;  // undo the unsqueezes from the last
    while (const auto* u = made_by(cur, "Unsqueeze")) {
      std::vector<int64_t> axes = opset_ >= 13 ? ints_or_empty(input_of(*u, 1)) : attr_is(*u, "axes");
      if (axes.empty()) return "";
      for (int64_t& a : axes)
        if (a < 0) a += static_cast<int64_t>(tags.size());
      std::sort(axes.rbegin(), axes.rend());
      for (int64_t a : axes) {
        if (a < 0 || a >= static_cast<int64_t>(tags.size()) || tags[static_cast<size_t>(a)] != '1') return "";
        tags.erase(static_cast<size_t>(a), 1);
      }
      cur = input_of(*u, 0);
      if (tags == "NC") return cur;
    }
    return "";
  }

  struct Modulated {
    std::string style;  // [N, I]
    ConstTensor w5;     // [1, O, I, kh, kw]
  };
  // W5 * style: one operand the constant [1, O, I, kh, kw], the other the style [N, I] as [N, 1, I, 1, 1].
  std::optional<Modulated> modulated_weight(const std::string& value) {
    const auto* m = made_by(value, "Mul");
    if (!m) return std::nullopt;
    for (int side : {0, 1}) {
      const auto w = fold(input_of(*m, side));
      if (!w || w->is_int || w->dims.size() != 5 || w->dims[0] != 1) continue;
      const std::string s = chain_from_rank2(input_of(*m, 1 - side), "N1C11", w->dims[2]);
      if (!s.empty()) return Modulated{s, *w};
    }
    return std::nullopt;
  }

  // sum over (I, kh, kw) of (W5 * s)^2 = s^2 . Wsq^T with Wsq[o][i] = sum over kh, kw of W^2.
  int demodulation_sums(int k, const onnx::NodeProto& n) {
    if (attr_i(n, "keepdims", 1) != 0) return 0;
    std::vector<int64_t> axes = opset_ >= 13 ? ints_or_empty(input_of(n, 1)) : attr_is(n, "axes");
    for (int64_t& a : axes)
      if (a < 0) a += 5;
    std::sort(axes.begin(), axes.end());
    if (axes != std::vector<int64_t>{2, 3, 4}) return 0;
    std::string squared;
    if (const auto* p = made_by(input_of(n, 0), "Pow")) {
      const auto e = fold(input_of(*p, 1));
      if (!e || e->numel() != 1 || e->at(0) != 2.0) return 0;
      squared = input_of(*p, 0);
    } else if (const auto* m = made_by(input_of(n, 0), "Mul"); m && input_of(*m, 0) == input_of(*m, 1)) {
      squared = input_of(*m, 0);
    } else {
      return 0;
    }
    const auto mod = modulated_weight(squared);
    if (!mod) return 0;
    const int64_t o = mod->w5.dims[1], i = mod->w5.dims[2], taps = mod->w5.dims[3] * mod->w5.dims[4];
    std::vector<float> sq(static_cast<size_t>(o * i), 0.f);
    for (int64_t r = 0; r < o * i; ++r)
      for (int64_t t = 0; t < taps; ++t) {
        const double v = mod->w5.f[static_cast<size_t>(r * taps + t)];
        sq[static_cast<size_t>(r)] += static_cast<float>(v * v);
      }
    const std::string base = n.name().empty() ? "demodulation" : n.name();
    const std::string s2 = fresh(base + "/style_squared");
    onnx::NodeProto gemm = node("Gemm", {s2, add_initializer(base + "/weight_squared_sums", ConstTensor::floats(sq, {o, i}))}, n.output(0), base);
    auto* t = gemm.add_attribute();
    t->set_name("transB");
    t->set_type(onnx::AttributeProto::INT);
    t->set_i(1);
    replace_[k] = {node("Mul", {mod->style, mod->style}, s2, base), gemm};
    return 1;
  }

  // Conv(Reshape(x, [1, N*I, H, W]), Reshape(W5 * s [* d], [N*O, I, kh, kw]), group N)
  // then Reshape to [N, O, H, W] (or the ConvTranspose, weight transposed to [N*I, O, kh, kw]):
  // Conv(x * s, W) [* d].
  int fused_modulated_conv(int k, const onnx::NodeProto& n) {
    const bool transposed = n.op_type() == "ConvTranspose";
    if (fold(input_of(n, 1)) || !input_of(n, 2).empty() || attr_i(n, "group", 1) != batch_) return 0;
    const auto* wr = only_made_by(input_of(n, 1), "Reshape");
    const auto* xr = made_by(input_of(n, 0), "Reshape");  // torch shares one between convs reading x
    if (!wr || !xr) return 0;
    std::string weight = input_of(*wr, 0);
    std::vector<Dim> transposed_view;
    if (transposed) {
      const auto* t = only_made_by(weight, "Transpose");
      if (!t || attr_is(*t, "perm") != std::vector<int64_t>{0, 2, 1, 3, 4}) return 0;
      weight = input_of(*t, 0);
      // [N, O, I, k, k] viewed as [N*O, I, k, k] and back (one port writes that): the same
      // values, when the view the Transpose reads is [N, O, I, k, k] (checked below).
      for (int views = 0; views < 2; ++views) {
        const auto* r = only_made_by(weight, "Reshape");
        const auto rt = r ? dims_of(input_of(*r, 1)) : std::nullopt;
        if (!rt || (rt->size() != 4 && rt->size() != 5)) break;
        if (views == 0) {
          if (rt->size() != 5) break;
          transposed_view = *rt;
        }
        weight = input_of(*r, 0);
      }
    }
    std::optional<Modulated> mod = modulated_weight(weight);
    std::string demod;
    if (!mod) {
      const auto* m = made_by(weight, "Mul");
      if (!m) return 0;
      for (int side : {0, 1}) {
        mod = modulated_weight(input_of(*m, side));
        if (!mod) continue;
        demod = chain_from_rank2(input_of(*m, 1 - side), "NC111", mod->w5.dims[1]);
        break;
      }
      if (!mod || demod.empty()) return 0;
    }
    const int64_t o = mod->w5.dims[1], i = mod->w5.dims[2], kh = mod->w5.dims[3], kw = mod->w5.dims[4];
    // The weight [N*O, I, kh, kw] ([N*I, O, kh, kw] transposed), x [1, N*I, H, W]: constants,
    // -1, or the batch read from a shape times the channels.
    const auto wt = dims_of(input_of(*wr, 1)), xt = dims_of(input_of(*xr, 1));
    if (!wt || !xt || wt->size() != 4 || xt->size() != 4) return 0;
    const std::vector<int64_t> rest = transposed ? std::vector<int64_t>{o, kh, kw} : std::vector<int64_t>{i, kh, kw};
    if (!is_batch((*wt)[0], transposed ? i : o)) return 0;
    for (size_t a = 1; a < 4; ++a)
      if (!(*wt)[a].of.empty() || (*wt)[a].value != rest[a - 1]) return 0;
    const Dim& x1 = (*xt)[1];  // N*I, or x's own batch times its channels
    const bool x_channels = x1.of == input_of(*xr, 0) && x1.axis == 0 && x1.times_axis == 1 && x1.mul == 1;
    if (!(*xt)[0].of.empty() || (*xt)[0].value != 1 || !(is_batch(x1, i) || x_channels)) return 0;
    if (!transposed_view.empty()) {
      if (!is_batch(transposed_view[0], 1)) return 0;
      const int64_t want[] = {o, i, kh, kw};
      for (size_t a = 1; a < 5; ++a)
        if (!transposed_view[a].of.empty() || (transposed_view[a].value != want[a - 1] && !(a == 1 && transposed_view[a].value == -1))) return 0;
    }
    // The conv's one reader but Shapes (of the reshape's target) puts the batch back: [N, O, H', W'].
    if (outputs_.count(n.output(0))) return 0;
    int back = -1;
    for (int r = 0; r < g_.node_size(); ++r)
      for (const auto& in : g_.node(r).input())
        if (in == n.output(0) && g_.node(r).op_type() != "Shape") {
          if (back >= 0) return 0;
          back = r;
        }
    if (back < 0 || g_.node(back).op_type() != "Reshape" || input_of(g_.node(back), 0) != n.output(0)) return 0;
    // [N, O, H', W']: N the export batch (or a batch dim torch read from a shape), W' and H'
    // constants or the conv output's own.
    const auto bt = dims_of(input_of(g_.node(back), 1));
    if (!bt || bt->size() != 4) return 0;
    const Dim &b0 = (*bt)[0], &b1 = (*bt)[1];
    if (!is_batch(b0, 1) || (b0.of.empty() && b0.value == -1)) return 0;
    if (!b1.of.empty() || (b1.value != o && b1.value != -1)) return 0;
    for (size_t a : {size_t{2}, size_t{3}}) {
      const Dim& d = (*bt)[a];
      if (!d.of.empty() && (d.of != n.output(0) || d.axis != static_cast<int64_t>(a) || d.mul != 1 || d.times_axis >= 0)) return 0;
    }

    ConstTensor w = mod->w5;
    w.dims = {o, i, kh, kw};
    if (transposed) w = transpose(w, {1, 0, 2, 3}, n.name());
    const std::string base = n.name().empty() ? "modulated_conv" : n.name();
    const std::string s4 = fresh(base + "/style"), xs = fresh(base + "/modulated_input");
    const std::string out = g_.node(back).output(0);
    const std::string y = demod.empty() ? out : fresh(base + "/output");
    std::vector<onnx::NodeProto> nodes = {unsqueeze23(mod->style, s4, base), node("Mul", {input_of(*xr, 0), s4}, xs, base)};
    onnx::NodeProto conv = node(transposed ? "ConvTranspose" : "Conv", {xs, add_initializer(base + "/weight", w)}, y, base);
    for (const auto& a : n.attribute())
      if (a.name() != "group") *conv.add_attribute() = a;
    nodes.push_back(conv);
    if (!demod.empty()) {
      const std::string d4 = fresh(base + "/demodulation");
      nodes.push_back(unsqueeze23(demod, d4, base));
      nodes.push_back(node("Mul", {y, d4}, out, base));
    }
    replace_[k] = nodes;
    replace_[back] = {};
    return 1;
  }

  // Conv(Pad(Reshape(Pad(Reshape(x, [N, C, H, 1, W, 1]), up - 1 zeros after each sample),
  // [N, C, H*up, W*up])), FIR [C, 1, kh, kw], group C) = ConvTranspose(x, the FIR flipped,
  // stride up, group C): the same sums without the zeros.
  int upfirdn(int k, const onnx::NodeProto& n) {
    if (n.op_type() != "Conv" || !attr(n, "group")) return 0;
    const auto fir = fold(input_of(n, 1));
    const int64_t c = attr_i(n, "group", 1);
    if (!fir || fir->is_int || fir->dims.size() != 4 || fir->dims[0] != c || fir->dims[1] != 1) return 0;
    for (const char* a : {"strides", "dilations"})
      for (int64_t v : attr_is(n, a))
        if (v != 1) return 0;
    if (const auto* ap = attr(n, "auto_pad"); ap && ap->s() != "NOTSET") return 0;
    std::vector<int64_t> pads = attr_is(n, "pads");
    if (pads.empty()) pads = {0, 0, 0, 0};
    if (pads.size() != 4) return 0;
    std::string cur = input_of(n, 0);
    if (const auto* p = pad_under_whole_crops(cur)) {
      const std::vector<int64_t> pp = ints_or_empty(input_of(*p, 1));
      if (!zero_constant_pad(*p) || pp.size() != 8 || pp[0] || pp[1] || pp[4] || pp[5]) return 0;
      for (int64_t v : pp)
        if (v < 0 || v > kMaxPad) return 0;
      for (int64_t v : pads)
        if (v < 0 || v > kMaxPad) return 0;
      pads = {pads[0] + pp[2], pads[1] + pp[3], pads[2] + pp[6], pads[3] + pp[7]};
      cur = input_of(*p, 0);
    }
    const auto* r2 = only_made_by(cur, "Reshape");
    const auto* p1 = r2 ? only_made_by(input_of(*r2, 0), "Pad") : nullptr;
    const auto* r1 = p1 ? only_made_by(input_of(*p1, 0), "Reshape") : nullptr;
    if (!r1 || !zero_constant_pad(*p1)) return 0;
    const std::string x = input_of(*r1, 0);
    const auto t1 = dims_of(input_of(*r1, 1)), t2 = dims_of(input_of(*r2, 1));
    const std::vector<int64_t> zp = ints_or_empty(input_of(*p1, 1));
    if (!t1 || !t2 || t1->size() != 6 || t2->size() != 4 || zp.size() != 12) return 0;
    for (int a : {0, 1, 2, 3, 4, 5, 6, 7, 8, 10})
      if (zp[static_cast<size_t>(a)] != 0) return 0;
    if (zp[9] < 0 || zp[11] < 0 || zp[9] >= kMaxFactor || zp[11] >= kMaxFactor) return 0;
    for (int64_t v : pads)
      if (v < 0 || v > kMaxPad) return 0;
    const int64_t uh = zp[9] + 1, uw = zp[11] + 1, kh = fir->dims[2], kw = fir->dims[3];
    const auto known = [](const Dim& d) { return d.of.empty() ? std::optional<int64_t>(d.value) : std::nullopt; };
    const std::vector<Dim>& a = *t1;
    const std::vector<Dim>& b = *t2;
    if (!is_dim(a[0], x, 0, 1, std::nullopt) || !is_dim(a[1], x, 1, 1, c) || !is_dim(a[2], x, 2, 1, known(a[2])) ||
        !a[3].of.empty() || a[3].value != 1 || !is_dim(a[4], x, 3, 1, known(a[4])) || !a[5].of.empty() || a[5].value != 1)
      return 0;
    if (!is_dim(b[0], x, 0, 1, std::nullopt) || !is_dim(b[1], x, 1, 1, c) || !is_dim(b[2], x, 2, uh, known(a[2])) || !is_dim(b[3], x, 3, uw, known(a[4])))
      return 0;
    const std::vector<int64_t> tpads = {kh - 1 - pads[0], kw - 1 - pads[1], kh - uh - pads[2], kw - uw - pads[3]};
    for (int64_t v : tpads)
      if (v < 0) return 0;
    ConstTensor flipped = *fir;
    const int64_t taps = kh * kw;
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t t = 0; t < taps; ++t) flipped.f[static_cast<size_t>(ch * taps + t)] = fir->f[static_cast<size_t>(ch * taps + taps - 1 - t)];
    return replace_by_fir_transpose(k, x, flipped, input_of(n, 2), n.output(0), n.name(), uh, uw, tpads);
  }
  // upfirdn2d as one port's portable path writes it, channels folded into the batch:
  // x [N, C, H, W] reshaped to [N*C, H, W, 1] and [N*C, H, 1, W, 1, 1], up - 1 zeros padded
  // after each sample, reshaped to [N*C, H*up, W*up, 1], padded, cropped by no-op Slices,
  // transposed to [N*C, 1, H', W'], one single-channel FIR Conv, reshaped and transposed
  // back to [N, C, H'', W'']: the same grouped transposed convolution as upfirdn() makes.
  int upfirdn_channels_in_batch(int k, const onnx::NodeProto& end) {
    const auto te = dims_of(input_of(end, 1));
    if (!te || te->size() != 4 || !(*te)[1].of.empty() || (*te)[1].value < 1 || (*te)[1].value > kMaxFactor) return 0;
    const int64_t c = (*te)[1].value;
    const auto const_dims = [&](const onnx::NodeProto* r, size_t rank) -> std::vector<int64_t> {
      const auto d = r ? dims_of(input_of(*r, 1)) : std::nullopt;  // a leading -1 (or the batch), then constants
      if (!d || d->size() != rank) return {};
      std::vector<int64_t> v;
      for (const Dim& e : *d) {
        if (!e.of.empty() || e.value < -1 || e.value > kMaxFactor) return {};
        v.push_back(e.value);
      }
      return v;
    };
    const auto* t2 = only_made_by(input_of(end, 0), "Transpose");
    if (!t2 || attr_is(*t2, "perm") != std::vector<int64_t>{0, 2, 3, 1}) return 0;
    const auto* r9 = only_made_by(input_of(*t2, 0), "Reshape");
    const std::vector<int64_t> d9 = const_dims(r9, 4);
    if (d9.empty() || d9[1] != 1) return 0;
    const auto* conv = only_made_by(input_of(*r9, 0), "Conv");
    const auto fir = conv ? fold(input_of(*conv, 1)) : std::nullopt;
    if (!fir || fir->is_int || fir->dims.size() != 4 || fir->dims[0] != 1 || fir->dims[1] != 1 || !input_of(*conv, 2).empty() ||
        attr_i(*conv, "group", 1) != 1)
      return 0;
    for (const char* a : {"strides", "dilations"})
      for (int64_t v : attr_is(*conv, a))
        if (v != 1) return 0;
    if (const auto* ap = attr(*conv, "auto_pad"); ap && ap->s() != "NOTSET") return 0;
    std::vector<int64_t> pads = attr_is(*conv, "pads");
    if (pads.empty()) pads = {0, 0, 0, 0};
    const auto* r7 = only_made_by(input_of(*conv, 0), "Reshape");
    const std::vector<int64_t> d7 = const_dims(r7, 4);
    const auto* t1 = r7 ? only_made_by(input_of(*r7, 0), "Transpose") : nullptr;
    if (d7.empty() || d7[1] != 1 || !t1 || attr_is(*t1, "perm") != std::vector<int64_t>{0, 3, 1, 2}) return 0;
    const auto* p2 = pad_under_whole_crops(input_of(*t1, 0));
    if (!p2) return 0;
    const std::vector<int64_t> pp = ints_or_empty(input_of(*p2, 1));
    if (pp.size() != 8 || pp[0] || pp[3] || pp[4] || pp[7]) return 0;
    const auto* r4 = only_made_by(input_of(*p2, 0), "Reshape");
    const auto* p1 = r4 ? only_made_by(input_of(*r4, 0), "Pad") : nullptr;
    const auto* r1 = p1 ? only_made_by(input_of(*p1, 0), "Reshape") : nullptr;
    const auto* r0 = r1 ? only_made_by(input_of(*r1, 0), "Reshape") : nullptr;
    if (!r0 || !zero_constant_pad(*p1)) return 0;
    const std::vector<int64_t> d4 = const_dims(r4, 4), d1 = const_dims(r1, 6), d0 = const_dims(r0, 4), zp = ints_or_empty(input_of(*p1, 1));
    if (d4.empty() || d1.empty() || d0.empty() || zp.size() != 12) return 0;
    for (int a : {0, 1, 2, 3, 4, 5, 6, 7, 9, 11})
      if (zp[static_cast<size_t>(a)] != 0) return 0;
    if (zp[8] < 0 || zp[10] < 0 || zp[8] >= kMaxFactor || zp[10] >= kMaxFactor) return 0;
    const int64_t uh = zp[8] + 1, uw = zp[10] + 1, h = d0[1], w = d0[2], kh = fir->dims[2], kw = fir->dims[3];
    if (d0[3] != 1 || d1[1] != h || d1[2] != 1 || d1[3] != w || d1[4] != 1 || d1[5] != 1 || d4[1] != h * uh || d4[2] != w * uw || d4[3] != 1) return 0;
    std::vector<int64_t> total = {pp[1], pp[2], pp[5], pp[6]};
    if (pads.size() != 4) return 0;
    for (size_t a = 0; a < 4; ++a) {
      if (total[a] < 0 || total[a] > kMaxPad || pads[a] < 0 || pads[a] > kMaxPad) return 0;
      total[a] += pads[a];
    }
    const std::vector<int64_t> tpads = {kh - 1 - total[0], kw - 1 - total[1], kh - uh - total[2], kw - uw - total[3]};
    for (int64_t v : tpads)
      if (v < 0) return 0;
    if (checked_numel({c, kh, kw}, kMaxFoldedElements, end.name()) < 0) return 0;
    ConstTensor flipped = ConstTensor::floats(std::vector<float>(static_cast<size_t>(c * kh * kw)), {c, 1, kh, kw});
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t t = 0; t < kh * kw; ++t) flipped.f[static_cast<size_t>(ch * kh * kw + t)] = fir->f[static_cast<size_t>(kh * kw - 1 - t)];
    return replace_by_fir_transpose(k, input_of(*r0, 0), flipped, "", end.output(0), end.name(), uh, uw, tpads);
  }
  // Node k becomes the grouped transposed convolution both upfirdn2d forms are: `flipped`
  // (the FIR reversed, [C, 1, kh, kw]) its weights, the up factors its strides; bias may be "".
  int replace_by_fir_transpose(int k, const std::string& x, const ConstTensor& flipped, const std::string& bias, const std::string& output,
                               const std::string& name, int64_t uh, int64_t uw, const std::vector<int64_t>& pads) {
    const std::string base = name.empty() ? "upfirdn" : name;
    Names inputs = {x, add_initializer(base + "/fir", flipped)};
    if (!bias.empty()) inputs.push_back(bias);
    onnx::NodeProto up = node("ConvTranspose", inputs, output, base);
    add_ints(up, "kernel_shape", {flipped.dims[2], flipped.dims[3]});
    add_ints(up, "strides", {uh, uw});
    add_ints(up, "pads", pads);
    add_int(up, "group", flipped.dims[0]);
    replace_[k] = {up};
    return 1;
  }
  // The zero constant Pad that `value` is, or that Slices keeping everything crop (the
  // crops of negative pads that the ports write, none here), else nullptr. The Pad may
  // also be read by the Shapes the crops' ends come from.
  const onnx::NodeProto* pad_under_whole_crops(std::string cur) {
    std::vector<const onnx::NodeProto*> crops;
    while (const auto* sl = only_made_by(cur, "Slice")) {
      crops.push_back(sl);
      cur = input_of(*sl, 0);
    }
    const auto* pad = crops.empty() ? only_made_by(cur, "Pad") : made_by(cur, "Pad");
    if (!pad || !zero_constant_pad(*pad)) return nullptr;
    for (const auto* sl : crops) {
      const auto starts = fold(input_of(*sl, 1));
      const auto ends = dims_of(input_of(*sl, 2));
      const auto axes = fold(input_of(*sl, 3));
      if (!starts || !ends || !axes || !axes->is_int || starts->numel() != axes->numel() || static_cast<int64_t>(ends->size()) != axes->numel())
        return nullptr;
      const auto steps = input_of(*sl, 4).empty() ? std::nullopt : fold(input_of(*sl, 4));
      if (!input_of(*sl, 4).empty() && (!steps || steps->numel() != axes->numel())) return nullptr;
      for (int64_t a = 0; a < axes->numel(); ++a) {
        if (starts->at(a) != 0 || (steps && steps->at(a) != 1)) return nullptr;
        const Dim& e = (*ends)[static_cast<size_t>(a)];
        const bool whole = e.of.empty() ? e.value >= kMaxFactor
                                        : e.of == pad->output(0) && e.axis == axes->i[static_cast<size_t>(a)] && e.mul == 1 && e.times_axis < 0;
        if (!whole) return nullptr;
      }
    }
    return pad;
  }

  static void add_ints(onnx::NodeProto& n, const char* name, const std::vector<int64_t>& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void add_int(onnx::NodeProto& n, const char* name, int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }

  bool zero_constant_pad(const onnx::NodeProto& p) {
    if (const auto* m = attr(p, "mode"); m && m->s() != "constant") return false;
    if (input_of(p, 2).empty()) return true;
    const auto v = fold(input_of(p, 2));
    return v && v->numel() == 1 && v->at(0) == 0.0;
  }

  // Tile(constant [1, ...], [N, 1, ...]): the one sample, which its readers broadcast.
  int one_sample_constant(const onnx::NodeProto& n) {
    if (outputs_.count(n.output(0))) return 0;
    for (const auto& r : g_.node())  // a repeated weight (a FIR per channel) is no sample
      for (int k = 0; k < r.input_size(); ++k)
        if (r.input(k) == n.output(0) && (k > 0 || r.op_type() == "Gemm" || r.op_type() == "MatMul") && r.op_type() != "Mul" && r.op_type() != "Add")
          return 0;
    const auto x = fold(input_of(n, 0));
    const std::vector<int64_t> reps = ints_or_empty(input_of(n, 1));
    if (!x || x->is_int || x->dims.empty() || x->dims[0] != 1 || reps.size() != x->dims.size() || reps[0] != batch_) return 0;
    for (size_t k = 1; k < reps.size(); ++k)
      if (reps[k] != 1) return 0;
    renamed_[n.output(0)] = add_initializer(n.output(0) + "/one_sample", *x);
    return 1;
  }

  // A reshape of a run-time value whose target names the export batch copies the batch.
  void batch_copying_reshape(onnx::NodeProto& n) {
    if (fold(input_of(n, 0))) return;
    const auto t = fold(input_of(n, 1));
    if (!t || !t->is_int || t->i.empty() || t->i[0] != batch_) return;
    ConstTensor copy = *t;
    copy.i[0] = 0;
    n.set_input(1, add_initializer(n.name() + "/batch_copying_shape", copy));
  }

  void apply() {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    for (int k = 0; k < g_.node_size(); ++k) {
      const auto it = replace_.find(k);
      if (it == replace_.end()) *nodes.Add() = g_.node(k);
      else
        for (const auto& r : it->second) *nodes.Add() = r;
    }
    for (auto& n : nodes)
      for (int k = 0; k < n.input_size(); ++k)
        if (const auto it = renamed_.find(n.input(k)); it != renamed_.end()) n.set_input(k, it->second);
    g_.mutable_node()->Swap(&nodes);
    folded_.clear();
    index();
  }

  void remove_dead_nodes() {
    for (bool changed = true; changed;) {
      changed = false;
      std::set<std::string> used(outputs_.begin(), outputs_.end());
      for (const auto& n : g_.node())
        for (const auto& i : n.input()) used.insert(i);
      google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
      for (const auto& n : g_.node()) {
        const bool live = std::any_of(n.output().begin(), n.output().end(), [&](const std::string& o) { return used.count(o) > 0; });
        if (live) *kept.Add() = n;
        else changed = true;
      }
      g_.mutable_node()->Swap(&kept);
    }
    std::set<std::string> used;
    for (const auto& n : g_.node())
      for (const auto& i : n.input()) used.insert(i);
    google::protobuf::RepeatedPtrField<onnx::TensorProto> inits;
    for (const auto& t : g_.initializer())
      if (used.count(t.name()) || outputs_.count(t.name())) *inits.Add() = t;
    g_.mutable_initializer()->Swap(&inits);
    index();
  }

  onnx::GraphProto& g_;
  int64_t opset_ = 0, batch_ = 0;
  std::map<std::string, const onnx::TensorProto*> inits_;
  std::set<std::string> outputs_, made_;
  std::map<std::string, int> producer_, readers_;
  std::map<std::string, std::optional<ConstTensor>> folded_;
  static constexpr int kMaxFoldDepth = 64;
  int fold_depth_ = 0;
  std::map<int, std::vector<onnx::NodeProto>> replace_;
  std::map<std::string, std::string> renamed_;
};

}  // namespace

bool may_hold_stylegan_patterns(const onnx::ModelProto& model) {
  for (const auto& n : model.graph().node())
    if (n.op_type() == "Tile" || n.op_type() == "Pad" || ((n.op_type() == "Conv" || n.op_type() == "ConvTranspose") && n.input_size() > 1 && attr_i(n, "group", 1) > 1) ||
        n.op_type() == "ReduceSum")
      return true;
  return false;
}

int rewrite_stylegan_patterns(onnx::ModelProto& model) { return Patterns(model).run(); }

}  // namespace edgegan::converter
