// ModulatedConv2D on Vulkan: the nested Conv2D or ConvTranspose2D through the Vulkan
// kernel those ops have, between the passes of kernels_vulkan/modulated_conv (one shader,
// its pass chosen per dispatch): the input scaled by the style into scratch, the
// demodulation coefficients, then the output scaled with bias and activation in place.
#include "engine/backend/vulkan/vulkan_kernel.h"
#include "engine/ops/modulated_conv2d.h"

namespace edgegan::vulkan {
namespace {

constexpr uint64_t kAlign = 256;

class ModulatedConv2DVulkan final : public OpKernel {
 public:
  // The scaled copy in the arena's storage type (halves in an fp16 session), the
  // coefficients in floats in both.
  ModulatedConv2DVulkan(const KernelArgs& a, Context& c, const schema::ModulatedConv2D& op)
      : upload_(a, c, 11), g_(ModulatedConvGeometry::make<KernelRefusal>(a, op, kAlign, upload_.half() ? 2 : 4)),
        args_(modulated_conv_nested_args(a, op, false)),
        conv_(op.conv()->kind_type() == schema::OpKind_Conv2D ? create_kernel<schema::OpKind_Conv2D>(args_, c)
                                                              : create_kernel<schema::OpKind_ConvTranspose2D>(args_, c)),
        tensors_(g_) {
    const int64_t values[] = {g_.in_channels, g_.out_channels, g_.in_pixels, g_.out_pixels, g_.demodulate ? 1 : 0};
    for (int i = 0; i < 5; ++i) upload_.set(i, static_cast<int32_t>(values[i]));
    upload_.set(5, g_.demodulate ? upload_.weights(op.squared_sums()) : -1);
    set_epilogue(upload_, op.epilogue(), 7, 6, 6);  // the slope's slot is the bias's: the geometry refuses a PRelu
    upload_.set_f(10, op.epsilon());
    upload_.commit();
  }
  const char* kernel_name() const override { return conv_->kernel_name(); }
  uint64_t workspace_bytes() const override { return g_.workspace_bytes(*conv_); }
  uint64_t repacked_weight_bytes() const override { return conv_->repacked_weight_bytes() + upload_.device_bytes(); }
  uint64_t macs() const override { return conv_->macs(); }
  void run(const RunContext& ctx) override {
    Push p;
    p.params = upload_.address();
    p.tensors[0] = address_of(ctx, g_.input);
    p.tensors[1] = reinterpret_cast<uint64_t>(g_.scaled(ctx));
    p.tensors[2] = address_of(ctx, g_.style);
    p.tensors[3] = reinterpret_cast<uint64_t>(g_.coefficients(ctx));
    p.first = 0;
    stream_of(ctx).dispatch("modulated_conv", upload_.half(), p, static_cast<uint64_t>(g_.input_count()));
    conv_->run(tensors_.nested_run_context(ctx, g_));
    if (g_.demodulate) {
      p.first = 1;
      stream_of(ctx).dispatch("modulated_conv", upload_.half(), p, static_cast<uint64_t>(g_.coefficient_count()));
    }
    p.tensors[1] = address_of(ctx, g_.output);
    p.first = 2;
    stream_of(ctx).dispatch("modulated_conv", upload_.half(), p, static_cast<uint64_t>(g_.output_count()));
  }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  Upload upload_;
  const ModulatedConvGeometry g_;
  const KernelArgs args_;  // the nested op's, kept: its kernel's upload refers to them
  std::unique_ptr<OpKernel> conv_;
  ModulatedConvNestedTable tensors_;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_ModulatedConv2D>(const KernelArgs& a, Context& c) {
  return std::make_unique<ModulatedConv2DVulkan>(a, c, *a.op.kind_as_ModulatedConv2D());
}

}  // namespace edgegan::vulkan
