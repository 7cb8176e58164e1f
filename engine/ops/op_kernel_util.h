// Small pieces the op kernels share: where a gradient goes when it must be added to
// one another reader already wrote, and the scratch layout of a backward pass.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/ops/op_def.h"

namespace edgegan {

// Multiply-accumulates one run of a (transposed) convolution performs, as every
// backend's kernel reports them (the memory report's figures).
// Split: only the (input, tap) pairs that land inside the output; zero insertion:
// every tap of every output, zeros included; col2im: every tap of every input.
inline uint64_t conv_transpose2d_macs(const cpu::ConvShape& s, ConvTransposeAlgo algo) {
  switch (algo) {
    case ConvTransposeAlgo::kZeroInsert:
      return static_cast<uint64_t>(cpu::saturating_product({s.batch, s.in_channels, s.out_channels, s.h.out, s.w.out, s.h.kernel, s.w.kernel}));
    case ConvTransposeAlgo::kCol2im:
      return static_cast<uint64_t>(cpu::saturating_product({s.batch, s.in_channels, s.out_channels, s.h.in, s.w.in, s.h.kernel, s.w.kernel}));
    case ConvTransposeAlgo::kSplit: break;
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

}  // namespace edgegan
