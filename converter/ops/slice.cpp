// Slice from ONNX Split (one op per output) and Slice on run-time tensors (one op per
// sliced axis; torch writes x[:, :, 1:-1, 1:-1] as one node over two axes). Constant
// ones are folded before lowering.
#include <algorithm>

#include "converter/egan_writer.h"
#include "converter/errors.h"
#include "converter/lowering.h"
#include "converter/ops/op_lowering.h"
#include "converter/ops/sliding_channel_conv.h"

namespace edgegan::converter {
namespace {

// One axis of the data the node slices (ONNX axis order).
struct AxisSlice {
  int64_t axis = 0;
  SliceRange range;
};

// The Split parts' lengths along `axis`: the `split` input (opset 13+) or attribute
// (11-12), else num_outputs (opset 18+) parts of ceil(length / parts), else equal parts.
std::vector<int64_t> split_lengths(const RuntimeNode& rn, int64_t length) {
  const Node& n = rn.node;
  const int64_t outputs = static_cast<int64_t>(n.outputs.size());
  std::vector<int64_t> parts;
  if (rn.has_input(1)) parts = as_ints(rn.input(1), n, "split");
  else if (find_attr(n, "split")) parts = attr_ints(n, "split", {});
  if (!parts.empty()) {
    if (static_cast<int64_t>(parts.size()) != outputs)
      throw ConvertError(where(n) + ": 'split' has " + std::to_string(parts.size()) + " lengths for " + std::to_string(outputs) + " outputs");
    int64_t total = 0;
    for (int64_t p : parts) {
      if (p < 1 || p > length) throw ConvertError(where(n) + ": split length " + std::to_string(p) + " is outside 1.." + std::to_string(length));
      total += p;
    }
    if (total != length) throw ConvertError(where(n) + ": split lengths add up to " + std::to_string(total) + ", the axis has " + std::to_string(length));
    return parts;
  }
  const int64_t count = attr_int(n, "num_outputs", outputs);
  if (count != outputs) throw ConvertError(where(n) + ": attribute 'num_outputs' = " + std::to_string(count) + " but the node has " + std::to_string(outputs) + " outputs");
  if (find_attr(n, "num_outputs")) {  // opset 18: the last part may be shorter
    const int64_t each = (length + count - 1) / count;
    for (int64_t k = 0; k < count; ++k) parts.push_back(std::min(each, length - k * each));
  } else {
    if (length % count != 0)
      throw ConvertError(where(n) + ": an axis of " + std::to_string(length) + " does not split into " + std::to_string(count) + " equal parts");
    parts.assign(static_cast<size_t>(count), length / count);
  }
  for (int64_t p : parts)
    if (p < 1) throw ConvertError(where(n) + ": an axis of " + std::to_string(length) + " leaves output parts empty with num_outputs " + std::to_string(count));
  return parts;
}

// A run-time Slice's non-trivial axes. `input(k)` is the node's input k (starts, ends,
// axes, steps: constants), nullptr where the node omits it.
template <typename InputFn>
std::vector<AxisSlice> slice_axes(const Node& n, const std::vector<int64_t>& shape, InputFn input) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (!input(1) || !input(2)) throw ConvertError(where(n) + ": starts and ends are required");
  const std::vector<int64_t> starts = as_ints(*input(1), n, "starts"), ends = as_ints(*input(2), n, "ends");
  std::vector<int64_t> axes, steps;
  if (input(3)) axes = as_ints(*input(3), n, "axes");
  else for (int64_t k = 0; k < static_cast<int64_t>(starts.size()); ++k) axes.push_back(k);
  if (input(4)) steps = as_ints(*input(4), n, "steps");
  else steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    throw ConvertError(where(n) + ": starts, ends, axes and steps differ in length");
  std::vector<AxisSlice> out;
  for (size_t j = 0; j < starts.size(); ++j) {
    AxisSlice a;
    a.axis = normalize_axis(axes[j], rank, where(n));
    for (const AxisSlice& other : out)
      if (other.axis == a.axis) throw ConvertError(where(n) + ": axis " + std::to_string(a.axis) + " is sliced twice");
    const int64_t len = shape[static_cast<size_t>(a.axis)];
    a.range = slice_range(len, starts[j], ends[j], steps[j], where(n));
    if (a.range.count == len && a.range.step == 1) continue;  // the whole axis
    if (a.axis == 0) throw ConvertError(where(n) + ": slicing the batch axis is not supported");
    if (a.range.count < 1) throw ConvertError(where(n) + ": the slice of axis " + std::to_string(a.axis) + " is empty");
    out.push_back(a);
  }
  return out;
}

// torch.cat([x[:, a:b], ...], 1) feeding a grouped Conv: when n is one of the Slices,
// every input of the Concat reading n is a step-1 channel Slice of n's input, and the
// channels are a sliding-channel convolution's windows, the whole pattern becomes one
// SlidingChannelConv (the Slices and the Concat claimed) and this returns true.
bool lower_sliced_channel_stack(const Node& n, Lowering& l) {
  const std::string source = l.resolve(n.inputs[0]);
  const Value& x = l.value(n.inputs[0]);
  if (x.shape.size() != 4) return false;
  const Node* cat = l.sole_consumer(n);
  if (!cat || cat->op != "Concat") return false;
  const int64_t axis = attr_int(*cat, "axis", 0);
  if (axis != 1 && axis != -3) return false;
  std::vector<int64_t> channels;
  std::vector<const Node*> slices;
  for (const std::string& in : cat->inputs) {
    const Node* p = l.producer_node(in);
    if (!p || p->op != "Slice" || l.resolve(p->inputs[0]) != source || l.sole_consumer(*p) != cat) return false;
    const std::vector<AxisSlice> axes =
        slice_axes(*p, x.shape, [&](size_t k) { return l.has_input(*p, k) ? &l.value(p->inputs[k]) : nullptr; });
    if (axes.empty()) {
      for (int64_t c = 0; c < x.shape[1]; ++c) channels.push_back(c);
    } else {
      if (axes.size() != 1 || axes[0].axis != 1 || axes[0].range.step != 1) return false;
      for (int64_t c = 0; c < axes[0].range.count; ++c) channels.push_back(axes[0].range.start + c);
    }
    slices.push_back(p);
  }
  if (!lower_sliding_channel_stack(n, cat->outputs[0], channels, l)) return false;
  l.claim(*cat);
  for (const Node* p : slices) l.claim(*p);
  return true;
}

class SliceLowering final : public OpLowering {
 public:
  std::vector<std::string> onnx_ops() const override { return {"Split", "Slice"}; }

  void infer(RuntimeNode& rn) const override {
    const Node& n = rn.node;
    const Value& x = rn.runtime_input(0);
    if (x.is_int) throw ConvertError(where(n) + ": slicing integer tensors at run time is not supported");
    if (n.op == "Split") {
      check_attributes(n, {"axis", "split", "num_outputs"});
      const int64_t axis = normalize_axis(attr_int(n, "axis", 0), static_cast<int64_t>(x.shape.size()), where(n));
      if (axis == 0) throw ConvertError(where(n) + ": attribute 'axis' = 0 splits the batch, which is not supported");
      const std::vector<int64_t> parts = split_lengths(rn, x.shape[static_cast<size_t>(axis)]);
      for (size_t k = 0; k < parts.size(); ++k) {
        std::vector<int64_t> shape = x.shape;
        shape[static_cast<size_t>(axis)] = parts[k];
        rn.set_output_at(k, shape);
      }
      return;
    }
    check_attributes(n, {});
    std::vector<int64_t> shape = x.shape;
    const auto input = [&](size_t k) { return rn.has_input(k) ? &rn.input(k) : nullptr; };
    for (const AxisSlice& a : slice_axes(n, x.shape, input)) shape[static_cast<size_t>(a.axis)] = a.range.count;
    rn.set_output(shape);
  }

  void lower(const Node& n, Lowering& l) const override {
    const Value& x = l.value(n.inputs[0]);
    if (n.op == "Split") {
      const int64_t axis = normalize_axis(attr_int(n, "axis", 0), static_cast<int64_t>(x.shape.size()), where(n));
      int64_t start = 0;
      for (size_t k = 0; k < n.outputs.size(); ++k) {
        IrOp& op = l.add_op(schema::OpKind_Slice, n, {l.tensor(n, 0)}, k);
        op.axis = l.storage_axis(l.tensor(n, 0), x.shape.size(), axis);
        op.start = start;
        start += l.value(n.outputs[k]).shape[static_cast<size_t>(axis)];
      }
      return;
    }
    if (lower_sliced_channel_stack(n, l)) return;
    const std::vector<AxisSlice> axes =
        slice_axes(n, x.shape, [&](size_t k) { return l.has_input(n, k) ? &l.value(n.inputs[k]) : nullptr; });
    if (axes.empty()) {
      l.alias_output(n);
      return;
    }
    int input = l.tensor(n, 0);
    std::vector<int64_t> shape = x.shape;
    for (size_t j = 0; j < axes.size(); ++j) {
      shape[static_cast<size_t>(axes[j].axis)] = axes[j].range.count;
      IrOp& op = j + 1 == axes.size() ? l.add_op(schema::OpKind_Slice, n, {input})
                                      : l.add_op_with_new_tensor(schema::OpKind_Slice, n, {input}, n.outputs[0] + ":slice" + std::to_string(j), shape);
      op.axis = l.storage_axis(l.tensor(n, 0), x.shape.size(), axes[j].axis);
      op.start = axes[j].range.start;
      op.step = axes[j].range.step;
      input = op.output;
    }
  }

  flatbuffers::Offset<schema::Op> write(const IrModel&, const IrOp& op, EganWriter& w) const override {
    const auto body = schema::CreateSlice(w.fbb(), op.inputs[0], op.output, op.axis, op.start, op.step);
    return w.op(op, schema::OpKind_Slice, body.Union());
  }
};

}  // namespace

template <>
const OpLowering& op_lowering<schema::OpKind_Slice>() {
  static const SliceLowering lowering;
  return lowering;
}

}  // namespace edgegan::converter
