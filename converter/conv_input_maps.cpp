#include "converter/conv_input_maps.h"

#include <map>

#include "kernels_cpu/resize/resize.h"

namespace edgegan::converter {
namespace {

bool has_pads(const IrOp& conv) { return conv.input_pads[0] || conv.input_pads[1] || conv.input_pads[2] || conv.input_pads[3]; }
bool has_upsample(const IrOp& conv) { return conv.input_upsample[0] != 1 || conv.input_upsample[1] != 1; }

// A nearest Resize that is an integer upsampling whatever the input's size: output index
// o reads o / factor. Asymmetric coordinates with floor rounding are that by definition;
// half-pixel ones with round-half rounding too (o = k*f + r maps to k + (r - (f-1)/2)/f,
// less than half away from k), which the table at this size confirms.
bool integer_upsampling(const IrOp& op, const IrTensor& in, const IrTensor& out, int64_t (&factor)[2]) {
  if (op.resize_mode != schema::ResizeMode_Nearest) return false;
  const auto coords = static_cast<schema::ResizeCoordinates>(op.resize_coordinates);
  const auto nearest = static_cast<schema::ResizeNearest>(op.resize_nearest);
  const bool floor_by_definition = coords == schema::ResizeCoordinates_Asymmetric && nearest == schema::ResizeNearest_Floor;
  const bool half_pixel = (coords == schema::ResizeCoordinates_HalfPixel || coords == schema::ResizeCoordinates_PytorchHalfPixel) &&
                          (nearest == schema::ResizeNearest_RoundPreferFloor || nearest == schema::ResizeNearest_RoundPreferCeil);
  if (!floor_by_definition && !half_pixel) return false;
  cpu::ResizeParams p;
  p.coordinates = static_cast<cpu::ResizeCoordinates>(coords);
  p.nearest = static_cast<cpu::ResizeNearest>(nearest);
  for (int axis = 0; axis < 2; ++axis) {
    const int64_t in_len = in.dims[1 + axis], out_len = out.dims[1 + axis];
    if (out_len % in_len != 0) return false;
    factor[axis] = out_len / in_len;
    const cpu::ResizeAxis a{in_len, out_len, axis == 0 ? op.scale_h : op.scale_w};
    if (a.effective_scale() != static_cast<double>(factor[axis])) return false;
    for (int64_t o = 0; o < out_len; ++o) {
      int32_t index = 0;
      float weight = 0.f;
      cpu::resize_axis_taps(a, p, o, &index, &weight);
      if (index != o / factor[axis]) return false;
    }
  }
  return true;
}

}  // namespace

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
      const IrTensor& in = m.tensors[static_cast<size_t>(step.inputs.empty() ? t : step.inputs[0])];
      const IrTensor& out = m.tensors[static_cast<size_t>(t)];
      if (step.kind == schema::OpKind_NONE || !in.nhwc || !out.nhwc || in.dims.size() != 4) continue;
      // The map is upsample-then-pad: a Pad folds first (nearest the conv), a Resize before it.
      if (step.kind == schema::OpKind_Pad) {
        const bool mode_maps = step.pad_mode == schema::PadMode_Reflect || step.pad_mode == schema::PadMode_Edge || step.pad_mode == schema::PadMode_Wrap;
        const bool grows = step.pads[0] >= 0 && step.pads[1] >= 0 && step.pads[2] >= 0 && step.pads[3] >= 0;
        const bool fixed = step.pad_align == 0 && step.pad_size_scale == 0;  // a Conv2D's input map has fixed pads
        if (!mode_maps || !grows || !fixed || has_pads(conv) || has_upsample(conv)) continue;
        for (int k = 0; k < 4; ++k) conv.input_pads[k] = step.pads[k];
        conv.input_pad_mode = step.pad_mode;
      } else if (step.kind == schema::OpKind_Resize) {
        int64_t factor[2] = {1, 1};
        if (has_upsample(conv) || !integer_upsampling(step, in, out, factor)) continue;
        conv.input_upsample[0] = factor[0];
        conv.input_upsample[1] = factor[1];
      } else {
        continue;
      }
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
