// Activations that exporters write as several nodes, recognised so each lowers as one
// Elementwise activation (one pass instead of three to nine):
//   Mish      x * tanh(softplus(x))                              (torch before opset 18)
//   Gelu      x * (1 + erf(x / sqrt 2)) * 0.5                     (torch before opset 20)
//   GeluTanh  x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))) * 0.5
//   Silu      x * sigmoid(x)
// A product is read as a tree of Mul nodes (and Div by a constant scalar) whose inner
// nodes have no other reader, in any order and association, so 0.5 * x * (1 + erf(..))
// matches as torch's (x * (1 + erf(..))) * 0.5 does. Every intermediate must have no
// other reader; the constants must be the function's within float rounding.
#include <algorithm>
#include <cmath>

#include "converter/activation_patterns.h"
#include "converter/lowering.h"

namespace edgegan::converter {
namespace {

bool near(double v, double want) { return std::abs(v - want) <= 1e-5 * std::abs(want); }

class Matcher {
 public:
  Matcher(const std::vector<Node>& nodes, const std::map<std::string, size_t>& node_of, const std::map<std::string, int>& consumers,
          const Lowering& l)
      : nodes_(nodes), node_of_(node_of), consumers_(consumers), l_(l) {}

  // The product rooted at node `root` (a Mul), or false when it is none.
  struct Product {
    double scale = 1;
    std::vector<std::string> factors;  // run-time leaves, resolved
  };
  bool product(size_t root, Product& p, std::vector<size_t>& inner) const {
    const Node& n = nodes_[root];
    if (n.inputs.size() != 2) return false;
    if (n.op == "Div") {
      double c = 0;
      if (!scalar(n.inputs[1], c) || c == 0) return false;
      p.scale /= c;
      return leaf_or_product(n.inputs[0], p, inner);
    }
    if (n.op != "Mul") return false;
    return leaf_or_product(n.inputs[0], p, inner) && leaf_or_product(n.inputs[1], p, inner);
  }

  // The node producing `value` when only one node reads it (an inner node of a pattern).
  const Node* sole_producer(const std::string& value, const char* op, std::vector<size_t>& inner) const {
    const std::string v = l_.resolve(value);
    const auto it = node_of_.find(v);
    if (it == node_of_.end() || nodes_[it->second].op != op || readers(v) != 1) return nullptr;
    inner.push_back(it->second);
    return &nodes_[it->second];
  }

  bool scalar(const std::string& value, double& out) const {
    const Value& v = l_.value(value);
    if (!v.is_const || v.c.is_int || v.c.numel() != 1) return false;
    out = v.c.at(0);
    return true;
  }

  // An Add of the constant 1 and a node of kind `op` read only there: that node, else nullptr.
  const Node* one_plus(const std::string& value, const char* op, std::vector<size_t>& inner) const {
    const Node* add = sole_producer(value, "Add", inner);
    if (!add || add->inputs.size() != 2) return nullptr;
    for (size_t side = 0; side < 2; ++side) {
      double c = 0;
      if (scalar(add->inputs[side], c) && c == 1.0) return sole_producer(add->inputs[1 - side], op, inner);
    }
    return nullptr;
  }

  // The product rooted at `value`'s producer, read only by one node.
  bool product_of(const std::string& value, Product& p, std::vector<size_t>& inner) const {
    const std::string v = l_.resolve(value);
    const auto it = node_of_.find(v);
    if (it == node_of_.end() || readers(v) != 1) return false;
    inner.push_back(it->second);
    return product(it->second, p, inner);
  }

  // x * scale as such a product.
  bool scaled(const std::string& value, double scale, const std::string& x, std::vector<size_t>& inner) const {
    Product p;
    return product_of(value, p, inner) && near(p.scale, scale) && p.factors == std::vector<std::string>{x};
  }

 private:
  int readers(const std::string& v) const {
    const auto it = consumers_.find(v);
    return it == consumers_.end() ? 0 : it->second;
  }
  bool leaf_or_product(const std::string& value, Product& p, std::vector<size_t>& inner) const {
    double c = 0;
    if (scalar(value, c)) {
      p.scale *= c;
      return true;
    }
    const std::string v = l_.resolve(value);
    if (l_.value(v).is_const) return false;
    const auto it = node_of_.find(v);
    double divisor = 0;
    const bool inner_product = it != node_of_.end() && readers(v) == 1 &&
                               (nodes_[it->second].op == "Mul" ||
                                (nodes_[it->second].op == "Div" && nodes_[it->second].inputs.size() == 2 && scalar(nodes_[it->second].inputs[1], divisor)));
    if (inner_product) {
      inner.push_back(it->second);
      return product(it->second, p, inner);
    }
    p.factors.push_back(v);
    return true;
  }

  const std::vector<Node>& nodes_;
  const std::map<std::string, size_t>& node_of_;
  const std::map<std::string, int>& consumers_;
  const Lowering& l_;
};

}  // namespace

std::map<size_t, Node> Lowering::match_activation_patterns(std::set<size_t>& skipped) {
  const auto& nodes = a_.nodes;
  std::map<std::string, size_t> node_of;  // run-time output -> node
  for (size_t i = 0; i < nodes.size(); ++i)
    if (!a_.folded[i] && !nodes[i].outputs.empty()) node_of[nodes[i].outputs[0]] = i;
  const Matcher m(nodes, node_of, consumers_, *this);
  std::map<size_t, Node> found;
  // Last node first: a whole product is tried before the products inside it.
  for (size_t i = nodes.size(); i-- > 0;) {
    const Node& n = nodes[i];
    if (a_.folded[i] || n.op != "Mul" || skipped.count(i)) continue;
    Matcher::Product p;
    std::vector<size_t> inner;
    if (!m.product(i, p, inner)) continue;
    if (p.factors.size() != 2) continue;  // x and the function's other factor
    std::string a = p.factors[0], b = p.factors[1];
    std::string op, x;
    for (int swap = 0; swap < 2 && op.empty(); ++swap, std::swap(a, b)) {
      std::vector<size_t> more;
      if (near(p.scale, 1.0)) {
        if (const Node* s = m.sole_producer(b, "Sigmoid", more); s && resolve(s->inputs[0]) == a) op = kSiluPattern;
        else if (const Node* t = m.sole_producer(b, "Tanh", more)) {
          // Mish: x * tanh(softplus(x))
          if (const Node* sp = m.sole_producer(t->inputs[0], "Softplus", more); sp && resolve(sp->inputs[0]) == a) op = "Mish";
        }
      } else if (near(p.scale, 0.5)) {
        if (const Node* e = m.one_plus(b, "Erf", more); e && m.scaled(e->inputs[0], 0.70710678118654752, a, more)) {
          op = "Gelu";
        } else if (const Node* t = m.one_plus(b, "Tanh", more)) {
          // tanh(c * (x + 0.044715 * x^3)): c * u with u = Add(x, 0.044715 * x * x * x)
          Matcher::Product pq;
          if (m.product_of(t->inputs[0], pq, more) && near(pq.scale, 0.7978845608028654) && pq.factors.size() == 1) {
            if (const Node* u = m.sole_producer(pq.factors[0], "Add", more); u && u->inputs.size() == 2) {
              for (size_t side = 0; side < 2 && op.empty(); ++side) {
                Matcher::Product pc;
                if (resolve(u->inputs[side]) == a && m.product_of(u->inputs[1 - side], pc, more) && near(pc.scale, 0.044715) &&
                    pc.factors == std::vector<std::string>{a, a, a})
                  op = kGeluTanhPattern;
              }
            }
          }
        }
      }
      if (!op.empty()) {
        x = a;
        inner.insert(inner.end(), more.begin(), more.end());
      }
    }
    if (op.empty() || value(x).is_const) continue;
    std::sort(inner.begin(), inner.end());
    inner.erase(std::unique(inner.begin(), inner.end()), inner.end());
    if (std::any_of(inner.begin(), inner.end(), [&](size_t k) { return k == i || skipped.count(k) || a_.folded[k]; })) continue;
    // Every inner node's output is read only inside the pattern (checked as each was
    // taken: one reader), and the pattern's nodes read nothing but x and constants.
    std::set<size_t> all(inner.begin(), inner.end());
    all.insert(i);
    bool closed = true;
    int x_readers = 0;
    for (size_t k : all) {
      bool reads_x = false;
      for (const std::string& in : nodes[k].inputs) {
        if (in.empty()) continue;
        const std::string r = resolve(in);
        if (r == x) reads_x = true;
        else if (!value(r).is_const && !all.count(node_of.count(r) ? node_of.at(r) : nodes.size())) closed = false;
      }
      x_readers += reads_x;
    }
    if (!closed) continue;
    Node rep = n;
    rep.op = op;
    rep.name.clear();
    for (size_t k : all) rep.name += (rep.name.empty() ? "" : "+") + nodes[k].name;
    rep.inputs = {x};
    found[i] = rep;
    skipped.insert(inner.begin(), inner.end());
    consumers_[x] -= x_readers - 1;  // the pattern's nodes read x; the activation once
  }
  return found;
}

}  // namespace edgegan::converter
