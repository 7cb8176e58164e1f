// Elementwise from ONNX Relu, LeakyRelu, Tanh, Sigmoid, Elu, Selu, Clip (opset 11+: min
// and max constant inputs or absent; torch's Hardtanh and ReLU6), HardSigmoid, HardSwish,
// Softplus, Mish and Gelu (opset 20; approximate "none" or "tanh"). torch's decomposed
// exports (Mish before opset 18 as x * tanh(softplus(x)); GELU before opset 20 as
// x * (1 + erf(x / sqrt 2)) / 2 or its tanh form; SiLU as x * sigmoid(x)) are recognised
// by activation_patterns.cpp and lowered here as one Mish, Gelu, GeluTanh or Silu. An activation whose gradient follows
// from its output fuses into the epilogue of the op that produced the input when that
// op's kind takes an activation (OpLowering::epilogue_fusions), it has no other reader and
// no activation yet; HardSwish, Mish, the GELUs and SiLU never fuse (their backward
// reads the input). Only what cannot fuse becomes an Elementwise op.
#include <cfloat>
#include <cmath>
#include <map>

#include "converter/activation_patterns.h"
#include "converter/egan_writer.h"
#include "converter/errors.h"
#include "converter/lowering.h"
#include "converter/ops/op_lowering.h"
#include "kernels_cpu/activation/activation.h"

namespace edgegan::converter {
namespace {

struct ActivationSpec {
  schema::Activation activation = schema::Activation_None;
  float alpha = 0.01f, beta = 0.f;
};

// A Clip bound: a constant scalar input, or absent (unbounded).
float clip_bound(const Node& n, const std::map<std::string, Value>& values, size_t k, float fallback) {
  if (k >= n.inputs.size() || n.inputs[k].empty()) return fallback;
  const auto it = values.find(n.inputs[k]);
  if (it == values.end() || !it->second.is_const)
    throw ConvertError(where(n) + ": input " + std::to_string(k) + " ('" + n.inputs[k] + "', " + (k == 1 ? "min" : "max") +
                       ") must be a constant");
  if (it->second.c.numel() != 1) throw ConvertError(where(n) + ": " + (k == 1 ? "min" : "max") + " must be a scalar");
  const double v = it->second.c.at(0);
  return v < -FLT_MAX ? -FLT_MAX : v > FLT_MAX ? FLT_MAX : static_cast<float>(v);
}

ActivationSpec spec_of(const Node& n, const std::map<std::string, Value>& values) {
  ActivationSpec s;
  const std::string& op = n.op;
  if (op == "Relu") s.activation = schema::Activation_Relu;
  else if (op == "Tanh") s.activation = schema::Activation_Tanh;
  else if (op == "Sigmoid") s.activation = schema::Activation_Sigmoid;
  else if (op == "LeakyRelu") s = {schema::Activation_LeakyRelu, attr_float(n, "alpha", 0.01f), 0.f};
  else if (op == "Elu") s = {schema::Activation_Elu, attr_float(n, "alpha", 1.f), 0.f};
  else if (op == "Selu") s = {schema::Activation_Selu, attr_float(n, "alpha", 1.67326319217681884765625f), attr_float(n, "gamma", 1.05070102214813232421875f)};
  else if (op == "Clip") s = {schema::Activation_Clip, clip_bound(n, values, 1, -FLT_MAX), clip_bound(n, values, 2, FLT_MAX)};
  else if (op == "HardSigmoid") s = {schema::Activation_HardSigmoid, attr_float(n, "alpha", 0.2f), attr_float(n, "beta", 0.5f)};
  else if (op == "HardSwish") s.activation = schema::Activation_HardSwish;
  else if (op == "Softplus") s.activation = schema::Activation_Softplus;
  else if (op == "Mish") s.activation = schema::Activation_Mish;
  else if (op == "Gelu") {
    const std::string approximate = attr_string(n, "approximate", "none");
    if (approximate == "none") s.activation = schema::Activation_Gelu;
    else if (approximate == "tanh") s.activation = schema::Activation_GeluTanh;
    else throw ConvertError(where(n) + ": attribute 'approximate' = '" + approximate + "' is not supported (none or tanh)");
  }
  // Only activation_patterns.cpp makes nodes of these two names (no ONNX op has them).
  else if (op == kGeluTanhPattern) s.activation = schema::Activation_GeluTanh;
  else if (op == kSiluPattern) s.activation = schema::Activation_Silu;
  if (s.activation == schema::Activation_Elu && !(s.alpha > 0.f))
    throw ConvertError(where(n) + ": attribute 'alpha' = " + std::to_string(s.alpha) + " is not supported (must be positive)");
  if (s.activation == schema::Activation_Selu && !(s.alpha > 0.f))
    throw ConvertError(where(n) + ": attribute 'alpha' = " + std::to_string(s.alpha) + " is not supported (must be positive)");
  if (s.activation == schema::Activation_Selu && !(s.beta > 0.f))
    throw ConvertError(where(n) + ": attribute 'gamma' = " + std::to_string(s.beta) + " is not supported (must be positive)");
  // Clip with min above max is every value max (ONNX), as min(max, max(min, x)) gives.
  for (float v : {s.alpha, s.beta})
    if (!std::isfinite(v)) throw ConvertError(where(n) + ": a non-finite activation parameter is not supported");
  return s;
}

class ElementwiseLowering final : public OpLowering {
 public:
  std::vector<std::string> onnx_ops() const override {
    return {"Relu", "LeakyRelu", "Tanh", "Sigmoid", "Elu", "Selu", "Clip", "HardSigmoid", "HardSwish", "Softplus", "Mish", "Gelu"};
  }

  void infer(RuntimeNode& rn) const override {
    const Node& n = rn.node;
    if (n.op == "LeakyRelu" || n.op == "Elu") check_attributes(n, {"alpha"});
    else if (n.op == "Selu") check_attributes(n, {"alpha", "gamma"});
    else if (n.op == "HardSigmoid") check_attributes(n, {"alpha", "beta"});
    else if (n.op == "Gelu") check_attributes(n, {"approximate"});
    else check_attributes(n, {});  // Clip's opset-6 'min'/'max' attributes are refused by name
    const Value& x = rn.runtime_input(0);
    if (x.is_int) throw ConvertError(where(n) + ": integer input is not supported");
    spec_of(n, rn.values());
    rn.set_output(x.shape);
  }

  void lower(const Node& n, Lowering& l) const override {
    std::map<std::string, Value> constants;  // Clip's bounds
    for (size_t k = 1; k < n.inputs.size(); ++k)
      if (!n.inputs[k].empty()) constants[n.inputs[k]] = l.value(n.inputs[k]);
    const ActivationSpec s = spec_of(n, constants);
    if (cpu::activation_invertible(static_cast<cpu::Activation>(s.activation)))
      if (IrOp* p = l.fusable_producer(n, Fusion::kActivation)) {
        p->activation = s.activation;
        p->alpha = s.alpha;
        p->beta = s.beta;
        l.absorb(n, *p);
        l.model().activations_fused++;
        return;
      }
    IrOp& o = l.add_op(schema::OpKind_Elementwise, n, {l.tensor(n, 0)});
    o.activation = s.activation;
    o.alpha = s.alpha;
    o.beta = s.beta;
  }

  flatbuffers::Offset<schema::Op> write(const IrModel&, const IrOp& op, EganWriter& w) const override {
    const auto body = schema::CreateElementwise(w.fbb(), op.inputs[0], op.output, op.activation, op.alpha, op.beta);
    return w.op(op, schema::OpKind_Elementwise, body.Union());
  }
};

}  // namespace

template <>
const OpLowering& op_lowering<schema::OpKind_Elementwise>() {
  static const ElementwiseLowering lowering;
  return lowering;
}

}  // namespace edgegan::converter
