// PRelu on Vulkan: y = x > 0 ? x : slope[c] * x over the channels (last); may run in place.
#include "engine/backend/vulkan/vulkan_kernel.h"

namespace edgegan::vulkan {
namespace {

class PReluVulkan final : public SingleDispatchKernel {
 public:
  PReluVulkan(const KernelArgs& a, Context& c, const schema::PRelu& op)
      : SingleDispatchKernel(a, c, "prelu", 2, {op.input(), op.output()}, a.batch * a.tensor(op.input()).per_sample) {
    upload_.set(0, op.channels());
    upload_.set(1, upload_.weights(op.slope()));
    upload_.commit();
  }
  const char* kernel_name() const override { return "vulkan_prelu"; }
  bool works_in_place() const override { return true; }
  int in_place_input() const override { return tensor(0); }
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_PRelu>(const KernelArgs& a, Context& c) {
  return std::make_unique<PReluVulkan>(a, c, *a.op.kind_as_PRelu());
}

}  // namespace edgegan::vulkan
