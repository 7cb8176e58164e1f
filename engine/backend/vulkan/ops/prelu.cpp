// PRelu on Vulkan: y = x > 0 ? x : slope[c] * x over the channels (last); may run in place.
#include "engine/backend/vulkan/vulkan_kernel.h"

namespace edgegan::vulkan {
namespace {

class PReluVulkan final : public OpKernel {
 public:
  PReluVulkan(const KernelArgs& a, Context& c, const schema::PRelu& op)
      : upload_(a, c, 2), input_(op.input()), output_(op.output()), count_(a.batch * a.tensor(op.input()).per_sample) {
    upload_.set(0, op.channels());
    upload_.set(1, upload_.weights(op.slope()));
    upload_.commit();
  }
  const char* kernel_name() const override { return "vulkan_prelu"; }
  bool works_in_place() const override { return true; }
  int in_place_input() const override { return input_; }
  uint64_t repacked_weight_bytes() const override { return upload_.device_bytes(); }
  void run(const RunContext& ctx) override {
    Push p;
    p.params = upload_.address();
    p.tensors[0] = address_of(ctx, input_);
    p.tensors[1] = address_of(ctx, output_);
    stream_of(ctx).dispatch("prelu", p, static_cast<uint64_t>(count_));
  }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  Upload upload_;
  int input_, output_;
  int64_t count_;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_PRelu>(const KernelArgs& a, Context& c) {
  return std::make_unique<PReluVulkan>(a, c, *a.op.kind_as_PRelu());
}

}  // namespace edgegan::vulkan
