// DepthToSpace on Vulkan: both directions (space_to_depth too), DCR and CRD orders, one
// invocation per value of the space map.
#include "engine/backend/vulkan/vulkan_kernel.h"
#include "engine/ops/op_kernel_util.h"

namespace edgegan::vulkan {
namespace {

class DepthToSpaceVulkan final : public OpKernel {
 public:
  DepthToSpaceVulkan(const KernelArgs& a, Context& c, const schema::DepthToSpace& op)
      : upload_(a, c, 6), input_(op.input()), output_(op.output()), to_space_(!op.space_to_depth()) {
    const kernels::DepthToSpaceShape s = depth_to_space_shape(a, op);
    const int64_t values[] = {s.height, s.width, s.channels, s.block, s.mode == kernels::DepthToSpaceMode::kCRD ? 1 : 0, to_space_ ? 1 : 0};
    for (int i = 0; i < 6; ++i) upload_.set(i, static_cast<int32_t>(values[i]));
    count_ = s.batch * s.height * s.width * s.channels * s.block * s.block;
    upload_.commit();
  }
  const char* kernel_name() const override { return to_space_ ? "vulkan_depth_to_space" : "vulkan_space_to_depth"; }
  uint64_t repacked_weight_bytes() const override { return upload_.device_bytes(); }
  void run(const RunContext& ctx) override {
    Push p;
    p.params = upload_.address();
    p.tensors[0] = address_of(ctx, input_);
    p.tensors[1] = address_of(ctx, output_);
    stream_of(ctx).dispatch("depth_to_space", p, static_cast<uint64_t>(count_));
  }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  Upload upload_;
  int input_, output_;
  bool to_space_;
  int64_t count_ = 0;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_DepthToSpace>(const KernelArgs& a, Context& c) {
  return std::make_unique<DepthToSpaceVulkan>(a, c, *a.op.kind_as_DepthToSpace());
}

}  // namespace edgegan::vulkan
