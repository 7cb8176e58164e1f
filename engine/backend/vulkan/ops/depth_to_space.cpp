// DepthToSpace on Vulkan: both directions (space_to_depth too), DCR and CRD orders, one
// invocation per value of the space map.
#include "engine/backend/vulkan/vulkan_kernel.h"
#include "engine/ops/op_kernel_util.h"

namespace edgegan::vulkan {
namespace {

class DepthToSpaceVulkan final : public SingleDispatchKernel {
 public:
  DepthToSpaceVulkan(const KernelArgs& a, Context& c, const schema::DepthToSpace& op)
      : SingleDispatchKernel(a, c, "depth_to_space", 6, {op.input(), op.output()}), to_space_(!op.space_to_depth()) {
    const kernels::DepthToSpaceShape s = depth_to_space_shape(a, op);
    const int64_t values[] = {s.height, s.width, s.channels, s.block, s.mode == kernels::DepthToSpaceMode::kCRD ? 1 : 0, to_space_ ? 1 : 0};
    for (int i = 0; i < 6; ++i) upload_.set(i, static_cast<int32_t>(values[i]));
    count_ = s.batch * s.height * s.width * s.channels * s.block * s.block;
    upload_.commit();
  }
  const char* kernel_name() const override { return to_space_ ? "vulkan_depth_to_space" : "vulkan_space_to_depth"; }

 private:
  bool to_space_;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_DepthToSpace>(const KernelArgs& a, Context& c) {
  return std::make_unique<DepthToSpaceVulkan>(a, c, *a.op.kind_as_DepthToSpace());
}

}  // namespace edgegan::vulkan
