// Slice on Vulkan: a strided slice along one storage axis, negative steps included.
#include "engine/backend/vulkan/vulkan_kernel.h"
#include "engine/ops/op_kernel_util.h"

namespace edgegan::vulkan {
namespace {

class SliceVulkan final : public SingleDispatchKernel {
 public:
  SliceVulkan(const KernelArgs& a, Context& c, const schema::Slice& op) : SingleDispatchKernel(a, c, "slice", 5, {op.input(), op.output()}) {
    const kernels::SliceShape s = slice_shape(a, op);
    const int64_t values[] = {s.length, s.inner, s.start, s.step, s.count};
    for (int i = 0; i < 5; ++i) upload_.set(i, static_cast<int32_t>(values[i]));
    count_ = s.outer * s.count * s.inner;
    upload_.commit();
  }
  const char* kernel_name() const override { return "vulkan_slice"; }
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Slice>(const KernelArgs& a, Context& c) {
  return std::make_unique<SliceVulkan>(a, c, *a.op.kind_as_Slice());
}

}  // namespace edgegan::vulkan
