// Dense on the GPU: the implicit GEMM over 1x1 maps, y[N][out] = x[N][in] W[in][out].
#include "engine/backend/cuda/cuda_kernel.h"

namespace edgegan::cuda {
namespace {

class DenseCuda final : public OpKernel {
 public:
  DenseCuda(const KernelArgs& a, const schema::Dense& op)
      : upload_(a), input_(op.input()), output_(op.output()), batch_(a.batch), in_(op.in_features()), out_(op.out_features()) {
    weights_ = upload_.weights(op.weights());
    f16_ = a.weights.is_f16(op.weights());
    const auto* ep = op.epilogue();
    bias_ = upload_.weights(ep ? ep->bias() : 0);
    activation_ = ep ? static_cast<int>(ep->activation()) : 0;
    alpha_ = ep ? ep->alpha() : 0.01f;
    gemm_.shape = dense_gemm_shape(static_cast<int>(batch_), static_cast<int>(in_), static_cast<int>(out_));
    gemm_.prepare(a, upload_);
    upload_.commit();
  }
  const char* kernel_name() const override { return "cuda_dense_gemm"; }
  uint64_t workspace_bytes() const override { return gemm_.launch.workspace_bytes; }
  uint64_t repacked_weight_bytes() const override { return upload_.device_bytes(); }
  uint64_t macs() const override { return static_cast<uint64_t>(cpu::saturating_product({batch_, in_, out_})); }
  void run(const RunContext& ctx) override {
    gemm_.run(upload_, ctx.f32(input_), ctx.f32(output_), upload_.at(weights_), f16_, upload_.as<float>(bias_), activation_, alpha_, ctx.workspace,
              stream_of(ctx));
  }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  KernelUpload upload_;
  int input_, output_;
  int64_t batch_, in_, out_;
  PreparedGemm gemm_;
  int weights_ = -1, bias_ = -1, activation_ = 0;
  float alpha_ = 0.01f;
  bool f16_ = false;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Dense>(const KernelArgs& a) {
  return std::make_unique<DenseCuda>(a, *a.op.kind_as_Dense());
}

}  // namespace edgegan::cuda
