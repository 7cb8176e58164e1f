// ModulatedConv2D on CUDA: the nested Conv2D or ConvTranspose2D through the CUDA kernel
// those ops have (the implicit GEMM, the phase-split transposed conv), between the small
// passes of kernels_cuda/modulated_conv: the input scaled by the style into scratch,
// the demodulation coefficients, then the output scaled with bias and activation.
#include "engine/backend/cuda/cuda_kernel.h"
#include "engine/ops/modulated_conv2d.h"
#include "kernels_cuda/modulated_conv/modulated_conv.h"

namespace edgegan::cuda {
namespace {

constexpr uint64_t kAlign = 256;

std::unique_ptr<OpKernel> nested_kernel(const KernelArgs& a, const schema::ModulatedConv2D& op) {
  const KernelArgs n = modulated_conv_nested_args(a, op, false);
  if (op.conv()->kind_type() == schema::OpKind_Conv2D) return create_kernel<schema::OpKind_Conv2D>(n);
  return create_kernel<schema::OpKind_ConvTranspose2D>(n);
}

class ModulatedConv2DCuda final : public OpKernel {
 public:
  ModulatedConv2DCuda(const KernelArgs& a, const schema::ModulatedConv2D& op)
      : g_(ModulatedConvGeometry::make<KernelRefusal>(a, op, kAlign, sizeof(float))), conv_(nested_kernel(a, op)), upload_(a),
        tensors_(g_), epsilon_(op.epsilon()), activation_(activation_params(op.epilogue())) {
    wsq_ = g_.demodulate ? upload_.weights(op.squared_sums()) : -1;
    bias_ = op.epilogue() ? upload_.weights(op.epilogue()->bias()) : -1;
    upload_.commit();
  }
  const char* kernel_name() const override { return conv_->kernel_name(); }
  uint64_t workspace_bytes() const override { return g_.workspace_bytes(*conv_); }
  uint64_t repacked_weight_bytes() const override { return conv_->repacked_weight_bytes() + upload_.device_bytes(); }
  uint64_t macs() const override { return conv_->macs(); }
  void run(const RunContext& ctx) override {
    const cudaStream_t stream = stream_of(ctx);
    float* scaled = reinterpret_cast<float*>(g_.scaled(ctx));
    float* coefficients = reinterpret_cast<float*>(g_.coefficients(ctx));
    const float* style = ctx.f32(g_.style);
    const int batch = static_cast<int>(g_.batch), in_channels = static_cast<int>(g_.in_channels), out_channels = static_cast<int>(g_.out_channels);
    modulated_conv_scale_input(batch, g_.in_pixels, in_channels, style, ctx.f32(g_.input), scaled, stream);
    conv_->run(tensors_.nested_run_context(ctx, g_));
    if (g_.demodulate) modulated_conv_demodulation(batch, in_channels, out_channels, style, upload_.as<float>(wsq_), epsilon_, coefficients, stream);
    modulated_conv_finish_output(batch, g_.out_pixels, out_channels, g_.demodulate ? coefficients : nullptr, upload_.as<float>(bias_),
                                 ctx.f32(g_.output), activation_, stream);
  }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  const ModulatedConvGeometry g_;
  std::unique_ptr<OpKernel> conv_;
  KernelUpload upload_;
  ModulatedConvNestedTable tensors_;
  float epsilon_;
  ActivationParams activation_;
  int wsq_ = -1, bias_ = -1;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_ModulatedConv2D>(const KernelArgs& a) {
  return std::make_unique<ModulatedConv2DCuda>(a, *a.op.kind_as_ModulatedConv2D());
}

}  // namespace edgegan::cuda
