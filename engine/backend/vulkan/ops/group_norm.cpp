// GroupNorm on Vulkan (InstanceNorm: groups == channels): per (sample, group) its
// statistics into the workspace, then scale, shift, activation and the optional residual
// in one element-wise pass (kernels_vulkan/group_norm); may run in place over its input.
#include "engine/backend/vulkan/vulkan_kernel.h"

namespace edgegan::vulkan {
namespace {

class GroupNormVulkan final : public OpKernel {
 public:
  GroupNormVulkan(const KernelArgs& a, Context& c, const schema::GroupNorm& op)
      : upload_(a, c, 10), input_(op.input()), output_(op.output()), residual_(op.residual()), batch_(a.batch), groups_(op.groups()) {
    const TensorDesc& x = a.tensor(op.input());
    pixels_ = x.dims[1] * x.dims[2];
    channels_ = op.channels();
    upload_.set(0, static_cast<int32_t>(pixels_));
    upload_.set(1, static_cast<int32_t>(channels_));
    upload_.set(2, static_cast<int32_t>(groups_));
    set_activation(upload_, 3, op.activation(), op.alpha(), op.beta());
    upload_.set_f(6, op.epsilon());
    upload_.set(7, upload_.weights(op.scale()));
    upload_.set(8, upload_.weights(op.shift()));
    upload_.set(9, residual_ >= 0 ? 1 : 0);
    upload_.commit();
  }
  const char* kernel_name() const override { return "vulkan_group_norm"; }
  uint64_t workspace_bytes() const override { return static_cast<uint64_t>(batch_ * groups_) * 8; }
  uint64_t repacked_weight_bytes() const override { return upload_.device_bytes(); }
  // In place over the input, never over the residual (the CPU's rule, kept alike).
  bool works_in_place() const override { return residual_ != input_; }
  int in_place_input() const override { return input_; }
  void run(const RunContext& ctx) override {
    Push p;
    p.params = upload_.address();
    p.tensors[0] = address_of(ctx, input_);
    p.tensors[1] = address_of(ctx, output_);
    p.tensors[2] = residual_ >= 0 ? address_of(ctx, residual_) : 0;
    p.tensors[3] = reinterpret_cast<uint64_t>(ctx.workspace);
    Stream& s = stream_of(ctx);
    p.first = 0;
    s.dispatch("group_norm", upload_.half(), p, static_cast<uint64_t>(batch_ * groups_));
    p.first = 1;
    s.dispatch("group_norm", upload_.half(), p, static_cast<uint64_t>(batch_ * pixels_ * channels_));
  }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  Upload upload_;
  int input_, output_, residual_;
  int64_t batch_, groups_, pixels_ = 0, channels_ = 0;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_GroupNorm>(const KernelArgs& a, Context& c) {
  return std::make_unique<GroupNormVulkan>(a, c, *a.op.kind_as_GroupNorm());
}

}  // namespace edgegan::vulkan
