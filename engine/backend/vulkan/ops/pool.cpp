// Pool on Vulkan: max and average (pads, ceil_mode, count_include_pad, dilation, global
// windows) as the CPU defines them, one invocation per output value.
#include "engine/backend/vulkan/vulkan_kernel.h"

namespace edgegan::vulkan {
namespace {

class PoolVulkan final : public SingleDispatchKernel {
 public:
  PoolVulkan(const KernelArgs& a, Context& c, const schema::Pool& op)
      : SingleDispatchKernel(a, c, "pool", 17, {op.input(), op.output()}), max_(op.kind() == schema::PoolKind_Max) {
    const TensorDesc& x = a.tensor(op.input());
    const TensorDesc& y = a.tensor(op.output());
    const int64_t values[] = {op.channels(), max_ ? 1 : 0, op.count_include_pad() ? 1 : 0,
                              x.dims[1], op.kernel_h(), op.stride_h(), op.dilation_h(), op.pad_top(), op.pad_bottom(), y.dims[1],
                              x.dims[2], op.kernel_w(), op.stride_w(), op.dilation_w(), op.pad_left(), op.pad_right(), y.dims[2]};
    for (int i = 0; i < 17; ++i) upload_.set(i, static_cast<int32_t>(values[i]));
    count_ = a.batch * y.per_sample;
    upload_.commit();
  }
  const char* kernel_name() const override { return max_ ? "vulkan_pool_max" : "vulkan_pool_average"; }

 private:
  bool max_;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Pool>(const KernelArgs& a, Context& c) {
  return std::make_unique<PoolVulkan>(a, c, *a.op.kind_as_Pool());
}

}  // namespace edgegan::vulkan
