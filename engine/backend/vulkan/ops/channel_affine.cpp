// ChannelAffine on Vulkan: y = act(x * scale[c] + shift[c]), a BatchNorm with no
// producer to fold into; may run in place.
#include "engine/backend/vulkan/vulkan_kernel.h"

namespace edgegan::vulkan {
namespace {

class ChannelAffineVulkan final : public OpKernel {
 public:
  ChannelAffineVulkan(const KernelArgs& a, Context& c, const schema::ChannelAffine& op)
      : upload_(a, c, 6), input_(op.input()), output_(op.output()), count_(a.batch * a.tensor(op.input()).per_sample) {
    upload_.set(0, op.channels());
    set_activation(upload_, 1, op.activation(), op.alpha(), op.beta());
    upload_.set(4, upload_.weights(op.scale()));
    upload_.set(5, upload_.weights(op.shift()));
    upload_.commit();
  }
  const char* kernel_name() const override { return "vulkan_channel_affine"; }
  bool works_in_place() const override { return true; }
  int in_place_input() const override { return input_; }
  uint64_t repacked_weight_bytes() const override { return upload_.device_bytes(); }
  void run(const RunContext& ctx) override {
    Push p;
    p.params = upload_.address();
    p.tensors[0] = address_of(ctx, input_);
    p.tensors[1] = address_of(ctx, output_);
    stream_of(ctx).dispatch("channel_affine", p, static_cast<uint64_t>(count_));
  }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  Upload upload_;
  int input_, output_;
  int64_t count_;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_ChannelAffine>(const KernelArgs& a, Context& c) {
  return std::make_unique<ChannelAffineVulkan>(a, c, *a.op.kind_as_ChannelAffine());
}

}  // namespace edgegan::vulkan
