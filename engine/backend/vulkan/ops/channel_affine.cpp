// ChannelAffine on Vulkan: y = act(x * scale[c] + shift[c]), a BatchNorm with no
// producer to fold into; may run in place.
#include "engine/backend/vulkan/vulkan_kernel.h"

namespace edgegan::vulkan {
namespace {

class ChannelAffineVulkan final : public SingleDispatchKernel {
 public:
  ChannelAffineVulkan(const KernelArgs& a, Context& c, const schema::ChannelAffine& op)
      : SingleDispatchKernel(a, c, "channel_affine", 6, {op.input(), op.output()}, a.batch * a.tensor(op.input()).per_sample) {
    upload_.set(0, op.channels());
    set_activation(upload_, 1, op.activation(), op.alpha(), op.beta());
    upload_.set(4, upload_.weights(op.scale()));
    upload_.set(5, upload_.weights(op.shift()));
    upload_.commit();
  }
  const char* kernel_name() const override { return "vulkan_channel_affine"; }
  bool works_in_place() const override { return true; }
  int in_place_input() const override { return tensor(0); }
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_ChannelAffine>(const KernelArgs& a, Context& c) {
  return std::make_unique<ChannelAffineVulkan>(a, c, *a.op.kind_as_ChannelAffine());
}

}  // namespace edgegan::vulkan
