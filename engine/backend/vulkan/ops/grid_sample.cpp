// GridSample on Vulkan: every mode and padding, groups and offsets, one invocation per
// output value (kernels_vulkan/grid_sample).
#include "engine/backend/vulkan/vulkan_kernel.h"
#include "engine/ops/op_kernel_util.h"

namespace edgegan::vulkan {
namespace {

class GridSampleVulkan final : public SingleDispatchKernel {
 public:
  GridSampleVulkan(const KernelArgs& a, Context& c, const schema::GridSample& op)
      : SingleDispatchKernel(a, c, "grid_sample", 10, {op.input(), op.grid(), op.output()}) {
    const kernels::GridSampleShape s = grid_sample_shape(a, op);
    const int64_t values[] = {s.in_h, s.in_w, s.channels, s.out_h, s.out_w, s.groups, static_cast<int64_t>(s.mode), static_cast<int64_t>(s.padding),
                              s.align_corners ? 1 : 0, s.offsets ? 1 : 0};
    for (int i = 0; i < 10; ++i) upload_.set(i, static_cast<int32_t>(values[i]));
    count_ = s.batch * s.out_h * s.out_w * s.channels;
    upload_.commit();
  }
  const char* kernel_name() const override { return "vulkan_grid_sample"; }
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_GridSample>(const KernelArgs& a, Context& c) {
  return std::make_unique<GridSampleVulkan>(a, c, *a.op.kind_as_GridSample());
}

}  // namespace edgegan::vulkan
