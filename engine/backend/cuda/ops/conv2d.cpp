// Conv2D on the GPU: one implicit-GEMM task over the [kh][kw][Cin][Cout] weights,
// bias and activation in the epilogue.
#include "engine/backend/cuda/cuda_kernel.h"
#include "engine/ops/op_kernel_util.h"

namespace edgegan::cuda {
namespace {

class Conv2DCuda final : public OpKernel {
 public:
  Conv2DCuda(const KernelArgs& a, const schema::Conv2D& op) : upload_(a), input_(op.input()), output_(op.output()), shape_(a.conv_shape(op)) {
    weights_ = upload_.weights(op.weights());
    f16_ = a.weights.is_f16(op.weights());
    const auto* ep = op.epilogue();
    bias_ = upload_.weights(ep ? ep->bias() : 0);
    activation_ = ep ? static_cast<int>(ep->activation()) : 0;
    alpha_ = ep ? ep->alpha() : 0.01f;
    const auto& s = shape_;
    gemm_.shape = conv2d_gemm_shape(static_cast<int>(s.batch), static_cast<int>(s.h.in), static_cast<int>(s.w.in), static_cast<int>(s.in_channels),
                                    static_cast<int>(s.h.out), static_cast<int>(s.w.out), static_cast<int>(s.out_channels),
                                    static_cast<int>(s.h.kernel), static_cast<int>(s.w.kernel), static_cast<int>(s.h.stride),
                                    static_cast<int>(s.w.stride), static_cast<int>(s.h.dilation), static_cast<int>(s.w.dilation),
                                    static_cast<int>(s.h.pad_begin), static_cast<int>(s.w.pad_begin));
    gemm_.prepare(a, upload_);
    upload_.commit();
  }
  const char* kernel_name() const override { return "cuda_conv2d_implicit_gemm"; }
  uint64_t workspace_bytes() const override { return gemm_.launch.workspace_bytes; }
  uint64_t repacked_weight_bytes() const override { return upload_.device_bytes(); }
  uint64_t macs() const override { return conv2d_macs(shape_); }
  void run(const RunContext& ctx) override {
    gemm_.run(upload_, ctx.f32(input_), ctx.f32(output_), upload_.at(weights_), f16_, upload_.as<float>(bias_), activation_, alpha_, ctx.workspace,
              stream_of(ctx));
  }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  KernelUpload upload_;
  int input_, output_;
  cpu::ConvShape shape_;
  PreparedGemm gemm_;
  int weights_ = -1, bias_ = -1, activation_ = 0;
  float alpha_ = 0.01f;
  bool f16_ = false;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Conv2D>(const KernelArgs& a) {
  return std::make_unique<Conv2DCuda>(a, *a.op.kind_as_Conv2D());
}

}  // namespace edgegan::cuda
