// Elementwise on Vulkan: an activation with no producer to fuse into; may run in place.
#include "engine/backend/vulkan/vulkan_kernel.h"

namespace edgegan::vulkan {
namespace {

class ElementwiseVulkan final : public SingleDispatchKernel {
 public:
  ElementwiseVulkan(const KernelArgs& a, Context& c, const schema::Elementwise& op)
      : SingleDispatchKernel(a, c, "elementwise", 3, {op.input(), op.output()}, a.batch * a.tensor(op.input()).per_sample) {
    set_activation(upload_, 0, op.activation(), op.alpha(), op.beta());
    upload_.commit();
  }
  const char* kernel_name() const override { return "vulkan_activation"; }
  bool works_in_place() const override { return true; }
  int in_place_input() const override { return tensor(0); }
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Elementwise>(const KernelArgs& a, Context& c) {
  return std::make_unique<ElementwiseVulkan>(a, c, *a.op.kind_as_Elementwise());
}

}  // namespace edgegan::vulkan
