// ModulatedConv2D on CUDA: the nested Conv2D or ConvTranspose2D through the CUDA kernel
// those ops have (the implicit GEMM, the phase-split transposed conv), between the small
// passes of kernels_cuda/modulated_conv: the input scaled by the style into scratch,
// the demodulation coefficients, then the output scaled with bias and activation.
#include "engine/backend/cuda/cuda_kernel.h"
#include "kernels_cuda/modulated_conv/modulated_conv.h"

namespace edgegan::cuda {
namespace {

constexpr uint64_t kAlign = 256;
uint64_t aligned(uint64_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

std::unique_ptr<OpKernel> nested_kernel(const KernelArgs& a, const schema::Op& conv) {
  const KernelArgs n{a.model, conv, a.weights, a.batch, a.threads, a.conv_transpose2d_algo, a.precision, a.tracker, a.filter_copy_budget, false, {}, false};
  if (conv.kind_type() == schema::OpKind_Conv2D) return create_kernel<schema::OpKind_Conv2D>(n);
  return create_kernel<schema::OpKind_ConvTranspose2D>(n);
}

class ModulatedConv2DCuda final : public OpKernel {
 public:
  ModulatedConv2DCuda(const KernelArgs& a, const schema::ModulatedConv2D& op)
      : conv_(nested_kernel(a, *op.conv())), upload_(a), input_(op.input()), style_(op.style()), output_(op.output()),
        batch_(static_cast<int>(a.batch)), demodulate_(op.demodulate()), epsilon_(op.epsilon()),
        activation_(activation_params(op.epilogue())) {
    const schema::Op& conv = *op.conv();
    const bool transposed = conv.kind_type() == schema::OpKind_ConvTranspose2D;
    in_channels_ = transposed ? conv.kind_as_ConvTranspose2D()->in_channels() : conv.kind_as_Conv2D()->in_channels();
    out_channels_ = transposed ? conv.kind_as_ConvTranspose2D()->out_channels() : conv.kind_as_Conv2D()->out_channels();
    if (op.epilogue() && op.epilogue()->activation() == schema::Activation_PRelu) throw KernelRefusal("a PRelu epilogue is not supported");
    const TensorDesc& x = a.tensor(input_);
    const TensorDesc& y = a.tensor(output_);
    in_pixels_ = x.dims[1] * x.dims[2];
    out_pixels_ = y.dims[1] * y.dims[2];
    scaled_bytes_ = aligned(static_cast<uint64_t>(a.batch * in_pixels_ * in_channels_) * sizeof(float));
    coefficient_bytes_ = aligned(static_cast<uint64_t>(a.batch * out_channels_) * sizeof(float));
    wsq_ = demodulate_ ? upload_.weights(op.squared_sums()) : -1;
    bias_ = op.epilogue() ? upload_.weights(op.epilogue()->bias()) : -1;
    upload_.commit();
  }
  const char* kernel_name() const override { return conv_->kernel_name(); }
  uint64_t workspace_bytes() const override { return scaled_bytes_ + coefficient_bytes_ + conv_->workspace_bytes(); }
  uint64_t repacked_weight_bytes() const override { return conv_->repacked_weight_bytes() + upload_.device_bytes(); }
  uint64_t macs() const override { return conv_->macs(); }
  void run(const RunContext& ctx) override {
    const cudaStream_t stream = stream_of(ctx);
    float* scaled = reinterpret_cast<float*>(ctx.workspace);
    float* coefficients = reinterpret_cast<float*>(ctx.workspace + scaled_bytes_);
    const float* style = ctx.f32(style_);
    modulated_conv_scale_input(batch_, in_pixels_, static_cast<int>(in_channels_), style, ctx.f32(input_), scaled, stream);
    // The nested kernel reads the scaled copy where the input is (the table sized once:
    // runs allocate nothing, and a recorded graph keeps these addresses).
    tensors_.assign(ctx.tensors->begin(), ctx.tensors->end());
    tensors_[static_cast<size_t>(input_)] = reinterpret_cast<uint8_t*>(scaled);
    RunContext inner = ctx;
    inner.tensors = &tensors_;
    inner.workspace = ctx.workspace + scaled_bytes_ + coefficient_bytes_;
    conv_->run(inner);
    if (demodulate_)
      modulated_conv_demodulation(batch_, static_cast<int>(in_channels_), static_cast<int>(out_channels_), style, upload_.as<float>(wsq_),
                                  epsilon_, coefficients, stream);
    modulated_conv_finish_output(batch_, out_pixels_, static_cast<int>(out_channels_), demodulate_ ? coefficients : nullptr,
                                 upload_.as<float>(bias_), ctx.f32(output_), activation_, stream);
  }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  std::unique_ptr<OpKernel> conv_;
  KernelUpload upload_;
  int input_, style_, output_, batch_;
  bool demodulate_;
  float epsilon_;
  ActivationParams activation_;
  int64_t in_channels_ = 0, out_channels_ = 0, in_pixels_ = 0, out_pixels_ = 0;
  uint64_t scaled_bytes_ = 0, coefficient_bytes_ = 0;
  int wsq_ = -1, bias_ = -1;
  std::vector<uint8_t*> tensors_;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_ModulatedConv2D>(const KernelArgs& a) {
  return std::make_unique<ModulatedConv2DCuda>(a, *a.op.kind_as_ModulatedConv2D());
}

}  // namespace edgegan::cuda
