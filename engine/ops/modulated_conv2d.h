// What every backend's ModulatedConv2D kernel shares: the nested convolution's channels,
// the pixels on each side, the workspace (the scaled input copy, the demodulation
// coefficients, then the nested kernel's own), the nested kernel's arguments, and the
// context it runs in on the scaled copy. Only the scaling passes are each backend's.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "engine/ops/op_def.h"

namespace edgegan {

struct ModulatedConvGeometry {
  // align: the backend's workspace alignment; scaled_value_bytes: the size of one value
  // of the scaled copy (the arena's storage type). Throws Refusal (the backend's) for
  // what the kernels do not run.
  template <typename Refusal>
  static ModulatedConvGeometry make(const KernelArgs& a, const schema::ModulatedConv2D& op, uint64_t align, uint64_t scaled_value_bytes) {
    if (const char* why = refusal(op)) throw Refusal(why);
    return ModulatedConvGeometry(a, op, align, scaled_value_bytes);
  }
  ModulatedConvGeometry(const KernelArgs& a, const schema::ModulatedConv2D& op, uint64_t align, uint64_t scaled_value_bytes);
  // What no kernel runs (validation refuses it too); nullptr: nothing.
  static const char* refusal(const schema::ModulatedConv2D& op);

  uint8_t* scaled(const RunContext& ctx) const { return ctx.workspace; }
  uint8_t* coefficients(const RunContext& ctx) const { return ctx.workspace + scaled_bytes; }
  uint8_t* nested_workspace(const RunContext& ctx) const { return ctx.workspace + scaled_bytes + coefficient_bytes; }
  uint64_t workspace_bytes(const OpKernel& conv) const { return scaled_bytes + coefficient_bytes + conv.workspace_bytes(); }
  // Values in the input, the output and the coefficients (all samples).
  int64_t input_count() const { return batch * in_pixels * in_channels; }
  int64_t output_count() const { return batch * out_pixels * out_channels; }
  int64_t coefficient_count() const { return batch * out_channels; }

  int input, style, output;
  int64_t batch, in_channels, out_channels, in_pixels, out_pixels;
  bool demodulate;
  uint64_t scaled_bytes, coefficient_bytes;
  size_t tensor_count;  // the model's: the nested table's size
};

// The nested Conv2D's or ConvTranspose2D's kernel arguments; training: the backend trains
// (the caller's training flags pass on), else they are an inference kernel's.
KernelArgs modulated_conv_nested_args(const KernelArgs& a, const schema::ModulatedConv2D& op, bool training);

// A tensor table the nested kernel reads (its values' or its gradients'): the op's with
// some entries moved, reserved at construction so that a run allocates nothing (and a
// recorded CUDA graph keeps its addresses).
class ModulatedConvNestedTable {
 public:
  explicit ModulatedConvNestedTable(const ModulatedConvGeometry& g) { table_.reserve(g.tensor_count); }
  // base with the address of each (tensor, address) of `entries` in place of the tensor's own.
  const std::vector<uint8_t*>* moved(const std::vector<uint8_t*>& base, std::initializer_list<std::pair<int, uint8_t*>> entries);
  // The forward's context: ctx with the input at the scaled copy, and the workspace past
  // the coefficients.
  RunContext nested_run_context(const RunContext& ctx, const ModulatedConvGeometry& g) {
    RunContext inner = ctx;
    inner.tensors = moved(*ctx.tensors, {{g.input, g.scaled(ctx)}});
    inner.workspace = g.nested_workspace(ctx);
    return inner;
  }

 private:
  std::vector<uint8_t*> table_;
};

}  // namespace edgegan
