// The checks an op's definition runs on one op of a model file being loaded
// (OpDef::validate). The flatbuffers Verifier only proves the bytes parse; these
// prove the op makes sense: indices in range, shapes consistent, every weight
// buffer exactly the size the op needs. A hostile file fails here, with a message
// naming the op and the defect, before anything is allocated from its numbers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/model_impl.h"

namespace edgegan {

// Largest per-sample tensor (elements) and spatial parameters a file may hold: far
// beyond any GAN, small enough that every product of them fits in int64.
constexpr int64_t kMaxDim = int64_t{1} << 24;
constexpr int64_t kMaxElements = int64_t{1} << 32;
constexpr int64_t kMaxKernel = 64, kMaxStride = 64, kMaxDilation = 64, kMaxPad = 4096;

[[noreturn]] void fail_validation(const std::string& where, const std::string& what);
std::string dims_text(const std::vector<int64_t>& dims);  // "-1x4x4x512"

class OpValidator {
 public:
  OpValidator(Model::Impl& model, int op_index, std::string where);

  const std::string& where() const { return where_; }
  // The same op, its messages naming a part of it: "op 3 'x' (ConvTranspose2D) phase 2".
  OpValidator at(const std::string& part) const { return OpValidator(m_, op_, where_ + part); }
  [[noreturn]] void fail(const std::string& what) const { fail_validation(where_, what); }
  Model::Impl& model() { return m_; }

  // An input: in range and already defined (a graph input or an earlier op's output).
  const TensorDesc& use(int index, const char* role);
  // The output: in range and defined here for the first time.
  TensorDesc& define(int index);
  // The output, whose shape follows from the op's inputs and parameters: `dims`. A
  // model as loaded must hold exactly these; a model re-shaped for another input size
  // (resizing()) takes them.
  TensorDesc& define_output(int index, const std::vector<int64_t>& dims);
  // The second half of define_output, for an output defined already.
  void derive_dims(TensorDesc& output, const std::vector<int64_t>& dims) const;
  // Whether the model is being re-shaped for another input size (Model::at_input_size).
  bool resizing() const { return m_.file_model != nullptr; }
  // The shape the file gives tensor `index` (its shape in the model as loaded).
  const std::vector<int64_t>& file_dims(int index) const;

  void expect_float(const TensorDesc& t) const;
  void expect_dims(const TensorDesc& t, const std::vector<int64_t>& want, const char* role) const;
  void check_range(int64_t value, int64_t lo, int64_t hi, const char* what) const;
  int64_t checked_mul(int64_t a, int64_t b) const;  // fails instead of overflowing
  // A weight buffer of `elements` values: float32, or float16 where the op reads
  // half-precision weights too. Buffer 0 is accepted when optional or elements == 0.
  void expect_buffer(uint32_t index, uint64_t elements, const char* role, bool optional, bool fp16_allowed = false) const;
  void check_activation(schema::Activation activation, float alpha, float beta = 0.f) const;
  // prelu: the op's kernels apply a fused PRelu (Conv2D, ConvTranspose2D); elsewhere it is refused.
  void check_epilogue(const schema::Epilogue* epilogue, int64_t channels, bool prelu = false) const;
  // An op's optional residual (y = op(x) + residual; index -1: none, then nullptr): an
  // input like any other (in range, produced earlier, so never the op's own output),
  // to be checked against the output with check_residual once that is defined.
  const TensorDesc* use_residual(int index);
  // The residual is a float tensor of exactly the output's dims and layout (no
  // broadcasting), and the op has no activation (its backward passes dy to the residual
  // unchanged and reads its own output's gradient as dy).
  void check_residual(const TensorDesc* residual, const TensorDesc& output, schema::Activation activation) const;
  // The parameters Conv2D and ConvTranspose2D share; returns the NHWC input.
  template <typename ConvOp>
  const TensorDesc& check_conv_params(const ConvOp& op, int64_t min_pad);

 private:
  bool is_graph_input(int index) const;
  const TensorDesc& tensor(int index, const char* role) const;

  Model::Impl& m_;
  int op_;
  std::string where_;
};

template <typename ConvOp>
const TensorDesc& OpValidator::check_conv_params(const ConvOp& op, int64_t min_pad) {
  const TensorDesc& x = use(op.input(), "input");
  expect_float(x);
  if (x.layout != Layout::kNHWC) fail("input must be an NHWC image tensor");
  check_range(op.in_channels(), 1, kMaxDim, "in_channels");
  check_range(op.out_channels(), 1, kMaxDim, "out_channels");
  check_range(op.kernel_h(), 1, kMaxKernel, "kernel_h");
  check_range(op.kernel_w(), 1, kMaxKernel, "kernel_w");
  check_range(op.stride_h(), 1, kMaxStride, "stride_h");
  check_range(op.stride_w(), 1, kMaxStride, "stride_w");
  check_range(op.dilation_h(), 1, kMaxDilation, "dilation_h");
  check_range(op.dilation_w(), 1, kMaxDilation, "dilation_w");
  for (int p : {op.pad_top(), op.pad_left(), op.pad_bottom(), op.pad_right()}) check_range(p, min_pad, kMaxPad, "pad");
  if (x.dims[3] != op.in_channels())
    fail("input has " + std::to_string(x.dims[3]) + " channels, the op expects " + std::to_string(op.in_channels()));
  return x;
}

}  // namespace edgegan
