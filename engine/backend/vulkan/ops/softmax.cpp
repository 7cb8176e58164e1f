// Softmax on Vulkan along one storage axis of a tensor viewed as [outer, axis, inner]:
// one invocation per line (kernels_vulkan/softmax).
#include "engine/backend/vulkan/vulkan_kernel.h"
#include "engine/ops/op_kernel_util.h"

namespace edgegan::vulkan {
namespace {

class SoftmaxVulkan final : public SingleDispatchKernel {
 public:
  SoftmaxVulkan(const KernelArgs& a, Context& c, const schema::Softmax& op) : SingleDispatchKernel(a, c, "softmax", 2, {op.input(), op.output()}) {
    const kernels::SoftmaxShape s = softmax_shape(a, op);
    upload_.set(0, static_cast<int32_t>(s.axis));
    upload_.set(1, static_cast<int32_t>(s.inner));
    count_ = s.axis > 0 ? s.outer * s.inner : 0;
    upload_.commit();
  }
  const char* kernel_name() const override { return "vulkan_softmax"; }
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Softmax>(const KernelArgs& a, Context& c) {
  return std::make_unique<SoftmaxVulkan>(a, c, *a.op.kind_as_Softmax());
}

}  // namespace edgegan::vulkan
