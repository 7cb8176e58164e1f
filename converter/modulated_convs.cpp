#include "converter/modulated_convs.h"

#include <map>
#include <optional>
#include <set>

#include "converter/conv_input_maps.h"

namespace edgegan::converter {
namespace {

class Graph {
 public:
  explicit Graph(IrModel& m) : m_(m) {
    for (size_t i = 0; i < m.ops.size(); ++i) {
      producer_[m.ops[i].output] = static_cast<int>(i);
      for (int t : m.ops[i].inputs) readers_[t].push_back(static_cast<int>(i));
    }
    for (const IrOutput& out : m.outputs) outputs_.insert(out.tensor);
  }
  IrOp* made_by(int tensor, schema::OpKind kind) {
    const auto it = producer_.find(tensor);
    if (it == producer_.end()) return nullptr;
    IrOp& op = m_.ops[static_cast<size_t>(it->second)];
    return op.kind == kind ? &op : nullptr;
  }
  // The one op reading `tensor` (and no graph output), else null.
  IrOp* sole_reader(int tensor) {
    const auto it = readers_.find(tensor);
    if (it == readers_.end() || it->second.size() != 1 || outputs_.count(tensor)) return nullptr;
    return &m_.ops[static_cast<size_t>(it->second[0])];
  }
  const IrTensor& tensor(int t) const { return m_.tensors[static_cast<size_t>(t)]; }

 private:
  IrModel& m_;
  std::map<int, int> producer_;
  std::map<int, std::vector<int>> readers_;
  std::set<int> outputs_;
};

bool is_mul(const IrOp& op) {
  return op.kind == schema::OpKind_Binary && op.binary_operation == schema::BinaryOperation_Mul && op.constant_operand < 0 &&
         op.inputs.size() == 2;
}

// A [N, C] tensor reshaped to NHWC [N, 1, 1, C]: the tensor [N, C].
std::optional<int> per_sample_channels(Graph& g, int t, int64_t channels) {
  const IrTensor& x = g.tensor(t);
  if (!x.nhwc || x.dims.size() != 4 || x.dims[1] != 1 || x.dims[2] != 1 || x.dims[3] != channels) return std::nullopt;
  const IrOp* reshape = g.made_by(t, schema::OpKind_Reshape);
  if (!reshape || reshape->inputs.size() != 1) return std::nullopt;
  const IrTensor& s = g.tensor(reshape->inputs[0]);
  if (s.dims.size() != 2 || s.dims[1] != channels) return std::nullopt;
  return reshape->inputs[0];
}

// The demodulation coefficients 1/sqrt(Dense(style^2) + eps) of `style` [N, Cin] for
// `cout` channels: the Dense (its weights [Cin][Cout] the squared sums, its bias eps).
const IrOp* demodulation(Graph& g, int d, int style, int64_t cin, int64_t cout) {
  int root = -1;
  if (const IrOp* div = g.made_by(d, schema::OpKind_Binary)) {
    if (div->binary_operation != schema::BinaryOperation_Div || div->constant_operand != 0 || div->weights.size() != 1 ||
        div->weights[0] != 1.f || div->inputs.size() != 1)
      return nullptr;
    const IrOp* sqrt = g.made_by(div->inputs[0], schema::OpKind_UnaryMath);
    if (!sqrt || sqrt->unary_operation != schema::UnaryMathOperation_Sqrt) return nullptr;
    root = sqrt->inputs[0];
  } else if (const IrOp* rsqrt = g.made_by(d, schema::OpKind_UnaryMath)) {
    if (rsqrt->unary_operation != schema::UnaryMathOperation_Rsqrt) return nullptr;
    root = rsqrt->inputs[0];
  } else {
    return nullptr;
  }
  const IrOp* dense = g.made_by(root, schema::OpKind_Dense);
  if (!dense || dense->in_features != cin || dense->out_features != cout || dense->activation != schema::Activation_None ||
      static_cast<int64_t>(dense->bias.size()) != cout)
    return nullptr;
  for (float b : dense->bias)
    if (b != dense->bias[0] || !(b >= 0.f)) return nullptr;  // one epsilon
  for (float w : dense->weights)
    if (!(w >= 0.f)) return nullptr;  // squared sums
  const int sq = dense->inputs[0];
  if (const IrOp* mul = g.made_by(sq, schema::OpKind_Binary)) {
    if (!is_mul(*mul) || mul->inputs[0] != style || mul->inputs[1] != style) return nullptr;
  } else if (const IrOp* pow = g.made_by(sq, schema::OpKind_UnaryMath)) {
    if (pow->unary_operation != schema::UnaryMathOperation_Pow || pow->exponent != 2.f || pow->inputs[0] != style) return nullptr;
  } else {
    return nullptr;
  }
  return dense;
}

// Marks every op whose output nothing reads (and is no graph output) as dead, repeatedly.
void drop_unread(IrModel& m) {
  for (bool changed = true; changed;) {
    changed = false;
    std::set<int> read;
    for (const IrOp& op : m.ops)
      if (op.kind != schema::OpKind_NONE) read.insert(op.inputs.begin(), op.inputs.end());
    for (const IrOutput& out : m.outputs) read.insert(out.tensor);
    for (IrOp& op : m.ops)
      if (op.kind != schema::OpKind_NONE && !read.count(op.output)) {
        op.kind = schema::OpKind_NONE;
        changed = true;
      }
  }
  drop_dead(m);
}

}  // namespace

int fuse_modulated_convs(IrModel& m) {
  int fused = 0;
  Graph g(m);
  for (IrOp& modulate : m.ops) {
    if (!is_mul(modulate)) continue;
    IrOp* conv = g.sole_reader(modulate.output);
    if (!conv || (conv->kind != schema::OpKind_Conv2D && conv->kind != schema::OpKind_ConvTranspose2D) || conv->inputs.size() != 1 ||
        conv->geometry.groups != 1 || conv->activation != schema::Activation_None || !conv->slope.empty() ||
        conv->input_upsample[0] != 1 || conv->input_upsample[1] != 1 || conv->input_pads[0] || conv->input_pads[1] ||
        conv->input_pads[2] || conv->input_pads[3])
      continue;
    const int64_t cin = conv->geometry.in_channels, cout = conv->geometry.out_channels;
    int x = -1;
    std::optional<int> style;
    for (int k = 0; k < 2 && !style; ++k)
      if ((style = per_sample_channels(g, modulate.inputs[static_cast<size_t>(k)], cin))) x = modulate.inputs[static_cast<size_t>(1 - k)];
    if (!style || g.tensor(x).dims != g.tensor(modulate.output).dims) continue;

    // Demodulated: the output (or, through a bias-free depthwise blur, the blur's) scaled
    // by the coefficients of the same style.
    IrOp* blur = nullptr;
    IrOp* scale = g.sole_reader(conv->output);
    if (scale && scale->kind == schema::OpKind_Conv2D && scale->geometry.groups == cout && scale->geometry.in_channels == cout &&
        scale->geometry.out_channels == cout && scale->bias.empty() && scale->activation == schema::Activation_None &&
        scale->inputs.size() == 1) {
      blur = scale;
      scale = g.sole_reader(blur->output);
    }
    const IrOp* dense = nullptr;
    if (scale && is_mul(*scale) && conv->bias.empty()) {
      const int scaled = blur ? blur->output : conv->output;
      for (int k = 0; k < 2 && !dense; ++k)
        if (scale->inputs[static_cast<size_t>(k)] == scaled)
          if (const auto coeffs = per_sample_channels(g, scale->inputs[static_cast<size_t>(1 - k)], cout))
            dense = demodulation(g, *coeffs, *style, cin, cout);
    }
    if (!dense) blur = nullptr, scale = nullptr;

    // The conv becomes the modulated one, reading x and the style; with the
    // demodulation, it writes what the scaling Mul wrote (or the blur reads it).
    conv->modulated_conv = conv->kind;
    conv->kind = schema::OpKind_ModulatedConv2D;
    conv->inputs = {x, *style};
    conv->name = modulate.name + "+" + conv->name;
    modulate.kind = schema::OpKind_NONE;
    if (dense) {
      conv->demodulate = true;
      conv->epsilon = dense->bias[0];
      conv->squared_sums.resize(static_cast<size_t>(cin * cout));
      for (int64_t i = 0; i < cin; ++i)
        for (int64_t o = 0; o < cout; ++o)
          conv->squared_sums[static_cast<size_t>(o * cin + i)] = dense->weights[static_cast<size_t>(i * cout + o)];
      conv->name += "+" + scale->name;
      if (blur) {
        blur->output = scale->output;  // the blur now writes the scaled output
      } else {
        conv->output = scale->output;
      }
      scale->kind = schema::OpKind_NONE;
    }
    ++fused;
  }
  if (fused) drop_unread(m);
  return fused;
}

}  // namespace edgegan::converter
