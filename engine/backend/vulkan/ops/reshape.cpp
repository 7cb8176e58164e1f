// Reshape on Vulkan, with ONNX (logical, NCHW) semantics as on the CPU: aliased when
// both storage orders are logical, otherwise re-ordered through logical order by
// per-sample transposes (kernels_vulkan/reshape).
#include "engine/backend/vulkan/vulkan_kernel.h"

namespace edgegan::vulkan {
namespace {

class ReshapeVulkan final : public OpKernel {
 public:
  ReshapeVulkan(const KernelArgs& a, Context& c, const schema::Reshape& op)
      : to_nhwc_(a, c, 2), to_nchw_(a, c, 2), input_(op.input()), output_(op.output()), batch_(a.batch), x_(a.tensor(op.input())), y_(a.tensor(op.output())) {
    if (!x_.storage_is_logical()) {  // NHWC -> NCHW: rows H*W, cols C
      to_nchw_.set(0, static_cast<int32_t>(x_.dims[1] * x_.dims[2]));
      to_nchw_.set(1, static_cast<int32_t>(x_.dims[3]));
    }
    if (!y_.storage_is_logical()) {  // NCHW -> NHWC: rows C, cols H*W
      to_nhwc_.set(0, static_cast<int32_t>(y_.dims[3]));
      to_nhwc_.set(1, static_cast<int32_t>(y_.dims[1] * y_.dims[2]));
    }
    to_nhwc_.commit();
    to_nchw_.commit();
  }
  const char* kernel_name() const override { return output_aliases_input() ? "reshape_alias" : "vulkan_reshape_relayout"; }
  bool output_aliases_input() const override { return x_.storage_is_logical() && y_.storage_is_logical(); }
  uint64_t workspace_bytes() const override {
    return needs_scratch() ? static_cast<uint64_t>(batch_ * x_.per_sample) * (to_nhwc_.half() ? 2 : 4) : 0;
  }
  uint64_t repacked_weight_bytes() const override { return to_nhwc_.device_bytes() + to_nchw_.device_bytes(); }
  void run(const RunContext& ctx) override {
    if (output_aliases_input()) return;
    const uint64_t x = address_of(ctx, input_), y = address_of(ctx, output_);
    const uint64_t count = static_cast<uint64_t>(batch_ * x_.per_sample);
    if (x_.storage_is_logical()) return transpose(ctx, to_nhwc_, x, y, count);
    if (y_.storage_is_logical()) return transpose(ctx, to_nchw_, x, y, count);
    const uint64_t logical = reinterpret_cast<uint64_t>(ctx.workspace);
    transpose(ctx, to_nchw_, x, logical, count);
    transpose(ctx, to_nhwc_, logical, y, count);
  }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  static void transpose(const RunContext& ctx, const Upload& shape, uint64_t x, uint64_t y, uint64_t count) {
    Push p;
    p.params = shape.address();
    p.tensors[0] = x;
    p.tensors[1] = y;
    stream_of(ctx).dispatch("transpose", shape.half(), p, count);
  }
  bool needs_scratch() const { return !x_.storage_is_logical() && !y_.storage_is_logical(); }
  Upload to_nhwc_, to_nchw_;
  int input_, output_;
  int64_t batch_;
  TensorDesc x_, y_;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Reshape>(const KernelArgs& a, Context& c) {
  return std::make_unique<ReshapeVulkan>(a, c, *a.op.kind_as_Reshape());
}

}  // namespace edgegan::vulkan
