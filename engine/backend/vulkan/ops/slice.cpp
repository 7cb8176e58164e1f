// Slice on Vulkan: a strided slice along one storage axis, negative steps included.
#include "engine/backend/vulkan/vulkan_kernel.h"
#include "engine/ops/op_kernel_util.h"

namespace edgegan::vulkan {
namespace {

class SliceVulkan final : public OpKernel {
 public:
  SliceVulkan(const KernelArgs& a, Context& c, const schema::Slice& op) : upload_(a, c, 5), input_(op.input()), output_(op.output()) {
    const kernels::SliceShape s = slice_shape(a, op);
    const int64_t values[] = {s.length, s.inner, s.start, s.step, s.count};
    for (int i = 0; i < 5; ++i) upload_.set(i, static_cast<int32_t>(values[i]));
    count_ = s.outer * s.count * s.inner;
    upload_.commit();
  }
  const char* kernel_name() const override { return "vulkan_slice"; }
  uint64_t repacked_weight_bytes() const override { return upload_.device_bytes(); }
  void run(const RunContext& ctx) override {
    Push p;
    p.params = upload_.address();
    p.tensors[0] = address_of(ctx, input_);
    p.tensors[1] = address_of(ctx, output_);
    stream_of(ctx).dispatch("slice", p, static_cast<uint64_t>(count_));
  }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  Upload upload_;
  int input_, output_;
  int64_t count_ = 0;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Slice>(const KernelArgs& a, Context& c) {
  return std::make_unique<SliceVulkan>(a, c, *a.op.kind_as_Slice());
}

}  // namespace edgegan::vulkan
