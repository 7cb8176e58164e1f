// Small pieces the op kernels share: where a gradient goes when it must be added to
// one another reader already wrote, and the scratch layout of a backward pass.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/ops/op_def.h"
#include "kernels_cpu/binary/binary.h"
#include "kernels_cpu/conv2d/conv2d_input_map.h"
#include "kernels_cpu/depth_to_space/depth_to_space.h"
#include "kernels_cpu/resize/resize.h"
#include "kernels_cpu/slice/slice.h"
#include "kernels_common/matmul_shape.h"
#include "kernels_common/grid_sample_shape.h"
#include "kernels_common/reduce_shape.h"
#include "kernels_common/softmax_shape.h"
#include "kernels_common/transpose_shape.h"

namespace edgegan {

// Multiply-accumulates one run of a (transposed) convolution performs, as every
// backend's kernel reports them (the memory report's figures).
// Split: only the (input, tap) pairs that land inside the output; zero insertion:
// every tap of every output, zeros included; col2im: every tap of every input.
inline uint64_t conv_transpose2d_macs(const cpu::ConvShape& s, ConvTranspose2DAlgo algo) {
  switch (algo) {
    case ConvTranspose2DAlgo::kZeroInsert:
      return static_cast<uint64_t>(cpu::saturating_product({s.batch, s.in_channels, s.out_channels, s.h.out, s.w.out, s.h.kernel, s.w.kernel}));
    case ConvTranspose2DAlgo::kCol2im:
      return static_cast<uint64_t>(cpu::saturating_product({s.batch, s.in_channels, s.out_channels, s.h.in, s.w.in, s.h.kernel, s.w.kernel}));
    case ConvTranspose2DAlgo::kSplit: break;
  }
  return static_cast<uint64_t>(cpu::saturating_product({s.batch, s.in_channels, s.out_channels,
                                                        static_cast<int64_t>(cpu::conv_transpose_useful_pairs(s.h)),
                                                        static_cast<int64_t>(cpu::conv_transpose_useful_pairs(s.w))}));
}
// Trimmed: only taps that read inside the input.
inline uint64_t conv2d_macs(const cpu::ConvShape& s) {
  return static_cast<uint64_t>(cpu::saturating_product({s.batch, s.in_channels, s.out_channels, static_cast<int64_t>(cpu::conv_useful_pairs(s.h)),
                                                        static_cast<int64_t>(cpu::conv_useful_pairs(s.w))}));
}

// A Concat as `outer` rows of one contiguous chunk per input (chunks[k] floats of
// input k per row), the output's rows being the chunks side by side.
struct ConcatLayout {
  int64_t outer = 1;
  std::vector<int64_t> chunks;
};
inline ConcatLayout concat_layout(const KernelArgs& a, const schema::Concat& op) {
  ConcatLayout l;
  const TensorDesc& y = a.tensor(op.output());
  const size_t axis = static_cast<size_t>(op.axis());
  l.outer = a.batch;
  for (size_t k = 1; k < axis; ++k) l.outer *= y.dims[k];
  int64_t inner = 1;
  for (size_t k = axis + 1; k < y.dims.size(); ++k) inner *= y.dims[k];
  for (int index : *op.inputs()) l.chunks.push_back(a.tensor(index).dims[axis] * inner);
  return l;
}

// dst[i] += src[i]
inline void add_into(float* dst, const float* src, int64_t count) {
  for (int64_t i = 0; i < count; ++i) dst[i] += src[i];
}

// A kernel's transformed filters (the Winograd forms'): kept by the session, a tracked
// copy remade when the weights change, or, where the kernel's rule or the session's
// budget for such copies says no (KernelArgs::filter_copy_budget), made at the start of
// every run in the first floats of the op's workspace.
class TransformedFilters {
 public:
  // `floats` of filters; `keep`: the kernel's own rule; `budget` (may be null: no limit)
  // must also have room for the copy, and is charged for it.
  void plan(const KernelArgs& a, int64_t floats, bool keep, int64_t* budget) {
    floats_ = floats;
    const int64_t bytes = floats * 4;
    if (keep && budget && *budget < bytes) keep = false;
    if (!keep) {
      run_floats_ = (floats + 15) / 16 * 16;
      return;
    }
    if (budget) *budget -= bytes;
    if (a.tracker) kept_ = TrackedBuffer(*a.tracker, static_cast<size_t>(bytes));
  }
  bool made_per_run() const { return run_floats_ > 0; }
  // Workspace floats in front of the kernel's own scratch (0 when kept).
  int64_t run_floats() const { return run_floats_; }
  // The session's copy, counted as its weight bytes (0 when made per run).
  uint64_t kept_bytes() const { return made_per_run() ? 0 : static_cast<uint64_t>(floats_) * 4; }
  float* kept() const { return kept_.floats(); }  // nullptr without a tracker or when made per run

 private:
  int64_t floats_ = 0, run_floats_ = 0;
  TrackedBuffer kept_;
};

// Carves consecutive 64-byte aligned float arrays out of an op's scratch; sized once
// (bytes() of a dry run with base nullptr) and then laid out the same way every call.
class ScratchLayout {
 public:
  explicit ScratchLayout(uint8_t* base = nullptr) : base_(base) {}
  float* take(int64_t floats) {
    float* p = base_ ? reinterpret_cast<float*>(base_ + used_) : nullptr;
    used_ += (static_cast<uint64_t>(floats < 0 ? 0 : floats) * 4 + 63) / 64 * 64;
    return p;
  }
  uint64_t bytes() const { return used_; }

 private:
  uint8_t* base_;
  uint64_t used_ = 0;
};

// Input k's gradient as a kernel that overwrites its result should write it: straight
// into the tensor's gradient when this op is the first to write it, else into
// `scratch`, to be added by finish_input_gradient.
inline float* input_gradient_target(const BackwardContext& b, int input_tensor, size_t k, float* scratch) {
  return b.accumulates(k) ? scratch : b.grad(input_tensor);
}
// A residual fused into the op (y = op(x) + residual, no activation): its gradient is
// the output's, dy, unchanged. `k` is its place in the op's inputs(); call it after the
// op's other inputs' gradients (backward writes an op's inputs in order).
inline void residual_gradient(const BackwardContext& b, int residual, size_t k, const float* dy, int64_t count) {
  if (!b.wants(k)) return;
  float* dr = b.grad(residual);
  if (b.accumulates(k)) add_into(dr, dy, count);
  else std::copy(dy, dy + count, dr);
}

inline void finish_input_gradient(const BackwardContext& b, int input_tensor, size_t k, const float* written, int64_t count) {
  if (b.accumulates(k)) add_into(b.grad(input_tensor), written, count);
}


// ---- the geometry each backend's kernels derive from an op alike

// A Conv2D's fused input map, per axis (factor 1 and no pads: none).
inline cpu::InputMapAxis map_axis_h(const schema::Conv2D& op) { return {op.input_upsample_h(), op.input_pad_top(), op.input_pad_bottom()}; }
inline cpu::InputMapAxis map_axis_w(const schema::Conv2D& op) { return {op.input_upsample_w(), op.input_pad_left(), op.input_pad_right()}; }
inline bool has_input_map(const schema::Conv2D& op) {
  const cpu::InputMapAxis h = map_axis_h(op), w = map_axis_w(op);
  return h.factor != 1 || w.factor != 1 || h.pad_begin != 0 || h.pad_end != 0 || w.pad_begin != 0 || w.pad_end != 0;
}
// The geometry over the map the convolution sees: its input, or its fused input map.
inline cpu::ConvShape conv2d_shape(const KernelArgs& a, const schema::Conv2D& op) {
  cpu::ConvShape s = a.conv_shape(op);
  s.h.in = map_axis_h(op).length(s.h.in);
  s.w.in = map_axis_w(op).length(s.w.in);
  return s;
}

inline cpu::ResizeShape resize_shape(const schema::Resize& op, const TensorDesc& x, const TensorDesc& y, int64_t batch) {
  cpu::ResizeShape s;
  s.batch = batch;
  s.channels = x.dims[3];
  s.h = {x.dims[1], y.dims[1], op.scale_h()};
  s.w = {x.dims[2], y.dims[2], op.scale_w()};
  s.params.mode = static_cast<cpu::ResizeMode>(op.mode());
  s.params.coordinates = static_cast<cpu::ResizeCoordinates>(op.coordinates());
  s.params.nearest = static_cast<cpu::ResizeNearest>(op.nearest_mode());
  s.params.cubic_coeff_a = op.cubic_coeff_a();
  s.params.exclude_outside = op.exclude_outside();
  return s;
}

// A Binary's operand and output dims in storage order (the batch first; a constant's
// from the file), and the operand it may overwrite: one of the output's shape is read
// at the element written, so in place works (-1: neither).
struct BinaryLayout {
  cpu::BinaryShape shape;
  int in_place = -1;
};
inline BinaryLayout binary_layout(const KernelArgs& args, const schema::Binary& op) {
  BinaryLayout l;
  const TensorDesc& y = args.tensor(op.output());
  l.shape.rank = static_cast<int>(y.dims.size());
  auto fill = [&](int tensor, int64_t* dims) {
    for (int k = 0; k < l.shape.rank; ++k) {
      if (tensor >= 0) dims[k] = k == 0 ? args.batch : args.tensor(tensor).dims[static_cast<size_t>(k)];
      else dims[k] = op.constant_dims()->Get(static_cast<uint32_t>(k));
    }
  };
  for (int k = 0; k < l.shape.rank; ++k) l.shape.out[k] = k == 0 ? args.batch : y.dims[static_cast<size_t>(k)];
  fill(op.a(), l.shape.a);
  fill(op.b(), l.shape.b);
  const int64_t n = cpu::binary_elements(l.shape.out, l.shape.rank);
  if (op.a() >= 0 && cpu::binary_elements(l.shape.a, l.shape.rank) == n) l.in_place = op.a();
  else if (op.b() >= 0 && cpu::binary_elements(l.shape.b, l.shape.rank) == n) l.in_place = op.b();
  return l;
}


inline cpu::SliceShape slice_shape(const KernelArgs& a, const schema::Slice& op) {
  const TensorDesc& x = a.tensor(op.input());
  const TensorDesc& y = a.tensor(op.output());
  const size_t axis = static_cast<size_t>(op.axis());
  cpu::SliceShape s;
  s.outer = a.batch;
  for (size_t k = 1; k < axis; ++k) s.outer *= x.dims[k];
  s.length = x.dims[axis];
  for (size_t k = axis + 1; k < x.dims.size(); ++k) s.inner *= x.dims[k];
  s.start = op.start();
  s.step = op.step();
  s.count = y.dims[axis];
  return s;
}

// A DepthToSpace's geometry, from its depth side (the input, or a SpaceToDepth's output).
inline cpu::DepthToSpaceShape depth_to_space_shape(const KernelArgs& a, const schema::DepthToSpace& op) {
  const TensorDesc& depth = a.tensor(op.space_to_depth() ? op.output() : op.input());
  cpu::DepthToSpaceShape s;
  s.batch = a.batch;
  s.height = depth.dims[1];
  s.width = depth.dims[2];
  s.block = op.block();
  s.channels = depth.dims[3] / (s.block * s.block);
  s.mode = static_cast<cpu::DepthToSpaceMode>(op.mode());
  return s;
}


inline kernels::GridSampleShape grid_sample_shape(const KernelArgs& a, const schema::GridSample& op) {
  const TensorDesc& x = a.tensor(op.input());
  const TensorDesc& y = a.tensor(op.output());
  kernels::GridSampleShape s;
  s.batch = a.batch;
  s.in_h = x.dims[1];
  s.in_w = x.dims[2];
  s.channels = x.dims[3];
  s.out_h = y.dims[1];
  s.out_w = y.dims[2];
  s.groups = op.groups();
  s.mode = static_cast<kernels::GridSampleMode>(op.mode());
  s.padding = static_cast<kernels::GridSamplePadding>(op.padding());
  s.align_corners = op.align_corners();
  s.offsets = op.offsets();
  return s;
}

// A tensor's storage dims with the session's batch in front.
inline std::vector<int64_t> batch_dims(const KernelArgs& a, int tensor) {
  std::vector<int64_t> d = a.tensor(tensor).dims;
  d[0] = a.batch;
  return d;
}

inline cpu::ReduceShape reduce_shape(const KernelArgs& a, const schema::Reduce& op) {
  const std::vector<int64_t> d = batch_dims(a, op.input());
  cpu::ReduceShape s;
  s.rank = static_cast<int>(d.size());
  for (int k = 0; k < s.rank; ++k) s.dims[k] = d[static_cast<size_t>(k)];
  for (int axis : *op.axes()) s.reduced[axis] = true;
  return s;
}

inline cpu::SoftmaxShape softmax_shape(const KernelArgs& a, const schema::Softmax& op) {
  const std::vector<int64_t> d = batch_dims(a, op.input());
  const size_t axis = static_cast<size_t>(op.axis());
  cpu::SoftmaxShape s;
  for (size_t k = 0; k < d.size(); ++k) (k < axis ? s.outer : k == axis ? s.axis : s.inner) *= d[k];
  return s;
}

inline cpu::TransposeShape transpose_shape(const KernelArgs& a, const schema::Transpose& op) {
  const std::vector<int64_t> d = batch_dims(a, op.input());
  cpu::TransposeShape s;
  s.rank = static_cast<int>(d.size());
  for (int k = 0; k < s.rank; ++k) s.in[k] = d[static_cast<size_t>(k)], s.perm[k] = op.perm()->Get(static_cast<uint32_t>(k));
  return s;
}

// A MatMul operand's logical (ONNX) dims: rank-4 tensors are stored NHWC [N, M, K, H]
// for [N, H, M, K].
inline std::vector<int64_t> matmul_logical_dims(const TensorDesc& t, int64_t batch) {
  std::vector<int64_t> d = t.dims;
  d[0] = batch;
  if (d.size() == 4 && t.layout == Layout::kNHWC) return {d[0], d[3], d[1], d[2]};
  return d;
}

inline cpu::MatMulShape matmul_shape(const KernelArgs& args, const schema::MatMul& op) {
  const TensorDesc &ta = args.tensor(op.a()), &tb = args.tensor(op.b()), &ty = args.tensor(op.output());
  const std::vector<int64_t> a = matmul_logical_dims(ta, args.batch), b = matmul_logical_dims(tb, args.batch),
                             y = matmul_logical_dims(ty, args.batch);
  const int rank = static_cast<int>(y.size());
  const bool nhwc = ty.layout == Layout::kNHWC;
  cpu::MatMulShape s;
  s.batch[0] = args.batch;
  s.batch[1] = rank == 4 ? y[1] : 1;
  s.m = y[static_cast<size_t>(rank - 2)], s.n = y[static_cast<size_t>(rank - 1)], s.k = a[static_cast<size_t>(rank - 1)];
  s.a = cpu::matrix_strides(a.data(), rank, nhwc);
  s.b = cpu::matrix_strides(b.data(), rank, nhwc);
  s.y = cpu::matrix_strides(y.data(), rank, nhwc);
  return s;
}

}  // namespace edgegan
