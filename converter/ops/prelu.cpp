// PRelu from ONNX PRelu with a constant slope: one value ([1], a scalar), or one per
// channel ([C,1,1], [1,C,1,1] on an NCHW map; [C] or [1,C] on [N,C] rows).
#include <algorithm>
#include <cmath>

#include "converter/egan_writer.h"
#include "converter/errors.h"
#include "converter/lowering.h"
#include "converter/ops/op_lowering.h"

namespace edgegan::converter {
namespace {

// The slope's values per channel (1 for a shared slope); throws naming the node.
std::vector<float> slopes(const Node& n, const std::vector<int64_t>& x, const ConstTensor& s) {
  std::vector<float> v;
  if (s.numel() == 1) return {static_cast<float>(s.at(0))};
  const size_t rank = x.size();
  std::vector<int64_t> d(rank > s.dims.size() ? rank - s.dims.size() : 0, 1);
  d.insert(d.end(), s.dims.begin(), s.dims.end());
  bool per_channel = (rank == 2 || rank == 3 || rank == 4) && d.size() == rank && d[1] == x[1];
  for (size_t k = 0; per_channel && k < rank; ++k)
    if (k != 1 && d[k] != 1) per_channel = false;
  if (!per_channel)
    throw ConvertError(where(n) + ": slope of shape [" + [&] {
      std::string t;
      for (size_t k = 0; k < s.dims.size(); ++k) {
        if (k) t += ",";
        t += std::to_string(s.dims[k]);
      }
      return t;
    }() + "] is not supported (one value, or one per channel: [C,1,1] on images, [C,1] on 1-D maps, [C] on rows)");
  for (int64_t k = 0; k < s.numel(); ++k) v.push_back(static_cast<float>(s.at(k)));
  return v;
}

class PReluLowering final : public OpLowering {
 public:
  std::vector<std::string> onnx_ops() const override { return {"PRelu"}; }

  void infer(RuntimeNode& rn) const override {
    check_attributes(rn.node, {});
    const Value& x = rn.runtime_input(0);
    if (x.is_int) throw ConvertError(where(rn.node) + ": integer input is not supported");
    slopes(rn.node, x.shape, rn.float_constant(1, "slope"));
    rn.set_output(x.shape);
  }

  void lower(const Node& n, Lowering& l) const override {
    const std::vector<float> s = slopes(n, l.value(n.inputs[0]).shape, l.constant(n, 1));
    // Into the producing convolution's epilogue (no pass of its own) where its gradient
    // follows from the output: every slope positive, so y and x have one sign.
    const bool positive = std::all_of(s.begin(), s.end(), [](float v) { return v > 0.f && std::isfinite(v); });
    if (IrOp* p = positive ? l.fusable_producer(n, Fusion::kPRelu) : nullptr) {
      const auto channels = static_cast<size_t>(op_lowering(p->kind).output_channels(*p));
      p->activation = schema::Activation_PRelu;
      p->slope = s.size() == 1 ? std::vector<float>(channels, s[0]) : s;
      l.absorb(n, *p);
      l.model().activations_fused++;
      return;
    }
    // Per channel on a 1-D map: the slope runs along its channels, so the map must be NHWC.
    const size_t rank = l.value(n.inputs[0]).shape.size();
    IrOp& o = l.add_op(schema::OpKind_PRelu, n, {rank == 3 ? l.spatial_tensor(n, 0) : l.tensor(n, 0)});
    o.weights = s;
  }

  flatbuffers::Offset<schema::Op> write(const IrModel&, const IrOp& op, EganWriter& w) const override {
    const uint32_t slope = w.blob(op.weights);
    const auto body = schema::CreatePRelu(w.fbb(), op.inputs[0], op.output, static_cast<int>(op.weights.size()), slope);
    return w.op(op, schema::OpKind_PRelu, body.Union());
  }
};

}  // namespace

template <>
const OpLowering& op_lowering<schema::OpKind_PRelu>() {
  static const PReluLowering lowering;
  return lowering;
}

}  // namespace edgegan::converter
