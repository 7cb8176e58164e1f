#include "converter/conv_input_maps.h"

#include <map>
#include <numeric>

#include "kernels_cpu/pad/pad.h"
#include "kernels_cpu/resize/resize.h"

namespace edgegan::converter {
namespace {

// Per axis (H, W) of `op`'s output, the index of its input each output index reads, or
// nothing when op is not a Pad or Resize that maps indices one to one.
bool source_tables(const IrOp& op, const IrTensor& in, const IrTensor& out, std::vector<int32_t> (&tables)[2]) {
  for (int axis = 0; axis < 2; ++axis) {
    const int64_t in_len = in.dims[1 + axis], out_len = out.dims[1 + axis];
    std::vector<int32_t>& t = tables[axis];
    t.resize(static_cast<size_t>(out_len));
    if (op.kind == schema::OpKind_Pad) {
      // A constant Pad fills with a value, not an index (a zero one already folded into the Conv's pads).
      if (op.pad_mode == schema::PadMode_Constant) return false;
      const cpu::PadAxis a{in_len, op.pads[axis], op.pads[axis + 2]};
      for (int64_t o = 0; o < out_len; ++o) t[static_cast<size_t>(o)] = static_cast<int32_t>(cpu::pad_source(a, static_cast<cpu::PadMode>(op.pad_mode), o));
    } else if (op.kind == schema::OpKind_Resize) {
      if (op.resize_mode != schema::ResizeMode_Nearest) return false;
      cpu::ResizeParams p;
      p.mode = cpu::ResizeMode::kNearest;
      p.coordinates = static_cast<cpu::ResizeCoordinates>(op.resize_coordinates);
      p.nearest = static_cast<cpu::ResizeNearest>(op.resize_nearest);
      const cpu::ResizeAxis a{in_len, out_len, axis == 0 ? op.scale_h : op.scale_w};
      for (int64_t o = 0; o < out_len; ++o) {
        float weight = 0.f;
        cpu::resize_axis_taps(a, p, o, &t[static_cast<size_t>(o)], &weight);
      }
    } else {
      return false;
    }
  }
  return true;
}

// Drops the ops of kind NONE and every tensor nothing reads, writes or exposes, renumbering the rest.
void drop_dead(IrModel& m) {
  std::vector<IrOp> ops;
  for (IrOp& op : m.ops)
    if (op.kind != schema::OpKind_NONE) ops.push_back(std::move(op));
  m.ops = std::move(ops);
  std::vector<int> used(m.tensors.size(), 0);
  for (const IrOp& op : m.ops) {
    used[static_cast<size_t>(op.output)] = 1;
    for (int t : op.inputs) used[static_cast<size_t>(t)] = 1;
  }
  for (const IrInput& in : m.inputs) used[static_cast<size_t>(in.tensor)] = 1;
  for (const IrOutput& out : m.outputs) used[static_cast<size_t>(out.tensor)] = 1;
  std::vector<int> renumber(m.tensors.size(), -1);
  std::vector<IrTensor> tensors;
  for (size_t t = 0; t < m.tensors.size(); ++t)
    if (used[t]) {
      renumber[t] = static_cast<int>(tensors.size());
      tensors.push_back(std::move(m.tensors[t]));
    }
  m.tensors = std::move(tensors);
  for (IrOp& op : m.ops) {
    op.output = renumber[static_cast<size_t>(op.output)];
    for (int& t : op.inputs) t = renumber[static_cast<size_t>(t)];
  }
  for (IrInput& in : m.inputs) in.tensor = renumber[static_cast<size_t>(in.tensor)];
  for (IrOutput& out : m.outputs) out.tensor = renumber[static_cast<size_t>(out.tensor)];
}

}  // namespace

int fuse_conv_input_maps(IrModel& m) {
  int folded = 0;
  for (bool changed = true; changed;) {
    changed = false;
    std::map<int, int> readers, producer;
    for (size_t i = 0; i < m.ops.size(); ++i) {
      producer[m.ops[i].output] = static_cast<int>(i);
      for (int t : m.ops[i].inputs) readers[t]++;
    }
    for (const IrOutput& out : m.outputs) readers[out.tensor]++;
    for (IrOp& conv : m.ops) {
      if (conv.kind != schema::OpKind_Conv2D) continue;
      const int t = conv.inputs[0];
      const auto p = producer.find(t);
      if (p == producer.end() || readers[t] != 1) continue;
      IrOp& step = m.ops[static_cast<size_t>(p->second)];
      if (step.kind == schema::OpKind_NONE) continue;
      const IrTensor& in = m.tensors[static_cast<size_t>(step.inputs[0])];
      const IrTensor& out = m.tensors[static_cast<size_t>(t)];
      if (!in.nhwc || !out.nhwc || in.dims.size() != 4) continue;
      std::vector<int32_t> tables[2];
      if (!source_tables(step, in, out, tables)) continue;
      // The convolution's tables so far index `out`; composed with the step's, they index `in`.
      std::vector<int32_t> rows = conv.input_rows, cols = conv.input_cols;
      if (rows.empty()) {
        rows.resize(static_cast<size_t>(out.dims[1]));
        cols.resize(static_cast<size_t>(out.dims[2]));
        std::iota(rows.begin(), rows.end(), 0);
        std::iota(cols.begin(), cols.end(), 0);
      }
      // The engine needs the map no smaller than what it reads (a downsampling Resize stays an op).
      if (static_cast<int64_t>(rows.size()) < in.dims[1] || static_cast<int64_t>(cols.size()) < in.dims[2]) continue;
      for (int32_t& index : rows) index = tables[0][static_cast<size_t>(index)];
      for (int32_t& index : cols) index = tables[1][static_cast<size_t>(index)];
      conv.input_rows = std::move(rows);
      conv.input_cols = std::move(cols);
      conv.inputs[0] = step.inputs[0];
      conv.name = step.name + "+" + conv.name;
      step.kind = schema::OpKind_NONE;
      ++folded;
      changed = true;
    }
    if (changed) drop_dead(m);
  }
  return folded;
}

}  // namespace edgegan::converter
