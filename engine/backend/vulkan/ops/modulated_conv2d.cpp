// ModulatedConv2D on Vulkan: the nested Conv2D or ConvTranspose2D through the Vulkan
// kernel those ops have, between the passes of kernels_vulkan/modulated_conv (one shader,
// its pass chosen per dispatch): the input scaled by the style into scratch, the
// demodulation coefficients, then the output scaled with bias and activation in place.
#include "engine/backend/vulkan/vulkan_kernel.h"

namespace edgegan::vulkan {
namespace {

constexpr uint64_t kAlign = 256;
uint64_t aligned(uint64_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

class ModulatedConv2DVulkan final : public OpKernel {
 public:
  ModulatedConv2DVulkan(const KernelArgs& a, Context& c, const schema::ModulatedConv2D& op)
      : args_{a.model, *op.conv(), a.weights, a.batch, a.threads, a.conv_transpose2d_algo, a.precision, a.tracker, a.filter_copy_budget, false, {}, false},
        conv_(op.conv()->kind_type() == schema::OpKind_Conv2D ? create_kernel<schema::OpKind_Conv2D>(args_, c)
                                                              : create_kernel<schema::OpKind_ConvTranspose2D>(args_, c)),
        upload_(a, c, 11), input_(op.input()), style_(op.style()), output_(op.output()), batch_(a.batch) {
    const schema::Op& conv = *op.conv();
    const bool transposed = conv.kind_type() == schema::OpKind_ConvTranspose2D;
    in_channels_ = transposed ? conv.kind_as_ConvTranspose2D()->in_channels() : conv.kind_as_Conv2D()->in_channels();
    out_channels_ = transposed ? conv.kind_as_ConvTranspose2D()->out_channels() : conv.kind_as_Conv2D()->out_channels();
    if (op.epilogue() && op.epilogue()->activation() == schema::Activation_PRelu) throw KernelRefusal("a PRelu epilogue is not supported");
    const TensorDesc& x = a.tensor(input_);
    const TensorDesc& y = a.tensor(output_);
    in_pixels_ = x.dims[1] * x.dims[2];
    out_pixels_ = y.dims[1] * y.dims[2];
    // The scaled copy in the arena's storage type (halves in an fp16 session); the
    // coefficients in floats in both.
    scaled_bytes_ = aligned(static_cast<uint64_t>(batch_ * in_pixels_ * in_channels_) * (upload_.half() ? 2 : 4));
    coefficient_bytes_ = aligned(static_cast<uint64_t>(batch_ * out_channels_) * sizeof(float));
    const int64_t values[] = {in_channels_, out_channels_, in_pixels_, out_pixels_, op.demodulate() ? 1 : 0};
    for (int i = 0; i < 5; ++i) upload_.set(i, static_cast<int32_t>(values[i]));
    upload_.set(5, op.demodulate() ? upload_.weights(op.squared_sums()) : -1);
    set_epilogue(upload_, op.epilogue(), 7, 6, 6);  // the slope's slot is the bias's: a PRelu is refused above
    upload_.set_f(10, op.epsilon());
    demodulate_ = op.demodulate();
    upload_.commit();
  }
  const char* kernel_name() const override { return conv_->kernel_name(); }
  uint64_t workspace_bytes() const override { return scaled_bytes_ + coefficient_bytes_ + conv_->workspace_bytes(); }
  uint64_t repacked_weight_bytes() const override { return conv_->repacked_weight_bytes() + upload_.device_bytes(); }
  uint64_t macs() const override { return conv_->macs(); }
  void run(const RunContext& ctx) override {
    const uint64_t scaled = reinterpret_cast<uint64_t>(ctx.workspace), coefficients = scaled + scaled_bytes_;
    Push p;
    p.params = upload_.address();
    p.tensors[0] = address_of(ctx, input_);
    p.tensors[1] = scaled;
    p.tensors[2] = address_of(ctx, style_);
    p.tensors[3] = coefficients;
    p.first = 0;
    stream_of(ctx).dispatch("modulated_conv", upload_.half(), p, static_cast<uint64_t>(batch_ * in_pixels_ * in_channels_));
    // The nested kernel reads the scaled copy where the input is (the table sized once).
    tensors_.assign(ctx.tensors->begin(), ctx.tensors->end());
    tensors_[static_cast<size_t>(input_)] = ctx.workspace;
    RunContext inner = ctx;
    inner.tensors = &tensors_;
    inner.workspace = ctx.workspace + scaled_bytes_ + coefficient_bytes_;
    conv_->run(inner);
    if (demodulate_) {
      p.first = 1;
      stream_of(ctx).dispatch("modulated_conv", upload_.half(), p, static_cast<uint64_t>(batch_ * out_channels_));
    }
    p.tensors[1] = address_of(ctx, output_);
    p.first = 2;
    stream_of(ctx).dispatch("modulated_conv", upload_.half(), p, static_cast<uint64_t>(batch_ * out_pixels_ * out_channels_));
  }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  const KernelArgs args_;  // the nested op's, kept: its kernel's upload refers to them
  std::unique_ptr<OpKernel> conv_;
  Upload upload_;
  int input_, style_, output_;
  int64_t batch_, in_channels_ = 0, out_channels_ = 0, in_pixels_ = 0, out_pixels_ = 0;
  bool demodulate_ = true;
  uint64_t scaled_bytes_ = 0, coefficient_bytes_ = 0;
  std::vector<uint8_t*> tensors_;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_ModulatedConv2D>(const KernelArgs& a, Context& c) {
  return std::make_unique<ModulatedConv2DVulkan>(a, c, *a.op.kind_as_ModulatedConv2D());
}

}  // namespace edgegan::vulkan
