// Pool on Vulkan: max and average (pads, ceil_mode, count_include_pad, dilation, global
// windows) as the CPU defines them, one invocation per output value.
#include "engine/backend/vulkan/vulkan_kernel.h"

namespace edgegan::vulkan {
namespace {

class PoolVulkan final : public OpKernel {
 public:
  PoolVulkan(const KernelArgs& a, Context& c, const schema::Pool& op)
      : upload_(a, c, 17), input_(op.input()), output_(op.output()), max_(op.kind() == schema::PoolKind_Max) {
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
  uint64_t repacked_weight_bytes() const override { return upload_.device_bytes(); }
  void run(const RunContext& ctx) override {
    Push p;
    p.params = upload_.address();
    p.tensors[0] = address_of(ctx, input_);
    p.tensors[1] = address_of(ctx, output_);
    stream_of(ctx).dispatch("pool", p, static_cast<uint64_t>(count_));
  }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  Upload upload_;
  int input_, output_;
  bool max_;
  int64_t count_ = 0;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Pool>(const KernelArgs& a, Context& c) {
  return std::make_unique<PoolVulkan>(a, c, *a.op.kind_as_Pool());
}

}  // namespace edgegan::vulkan
