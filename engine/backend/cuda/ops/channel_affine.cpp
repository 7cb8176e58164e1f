// ChannelAffine on the GPU: y = act(x * scale[c] + shift[c]), a BatchNorm with no
// producer to fold into; may run in place.
#include "engine/backend/cuda/cuda_kernel.h"
#include "kernels_cuda/elementwise/elementwise.h"

namespace edgegan::cuda {
namespace {

class ChannelAffineCuda final : public OpKernel {
 public:
  ChannelAffineCuda(const KernelArgs& a, const schema::ChannelAffine& op)
      : upload_(a), input_(op.input()), output_(op.output()), channels_(op.channels()),
        pixels_(a.batch * a.tensor(op.input()).per_sample / op.channels()), activation_(activation_params(op.activation(), op.alpha(), op.beta())) {
    scale_ = upload_.weights(op.scale());
    shift_ = upload_.weights(op.shift());
    upload_.commit();
  }
  const char* kernel_name() const override { return "cuda_channel_affine"; }
  bool works_in_place() const override { return true; }
  int in_place_input() const override { return input_; }
  uint64_t repacked_weight_bytes() const override { return upload_.device_bytes(); }
  void run(const RunContext& ctx) override {
    channel_affine(pixels_, static_cast<int>(channels_), upload_.as<float>(scale_), upload_.as<float>(shift_), ctx.f32(input_), ctx.f32(output_),
                   activation_, stream_of(ctx));
  }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  KernelUpload upload_;
  int input_, output_;
  int64_t channels_, pixels_;
  int scale_ = -1, shift_ = -1;
  ActivationParams activation_;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_ChannelAffine>(const KernelArgs& a) {
  return std::make_unique<ChannelAffineCuda>(a, *a.op.kind_as_ChannelAffine());
}

}  // namespace edgegan::cuda
