// SlidingChannelConv (DSXplore's SCC) on the GPU: a direct kernel reading each output
// channel's window of input channels in place, wrapping at Cin; the window table (one
// period of starts) is uploaded once with the weights ([Cout][kh][kw][window], float32:
// the validator allows no fp16 here). Bias and activation in the epilogue.
#include <vector>

#include "engine/backend/cuda/cuda_kernel.h"
#include "kernels_cuda/sliding_channel_conv/sliding_channel_conv.h"

namespace edgegan::cuda {
namespace {

class SlidingChannelConvCuda final : public OpKernel {
 public:
  SlidingChannelConvCuda(const KernelArgs& a, const schema::SlidingChannelConv& op)
      : upload_(a), input_(op.input()), output_(op.output()), shape_(a.conv_shape(op)), window_(op.window()),
        activation_(activation_params(op.epilogue())) {
    const std::vector<int32_t> starts(op.starts()->begin(), op.starts()->end());
    period_ = static_cast<int>(starts.size());
    starts_ = upload_.bytes(starts.data(), starts.size() * sizeof(int32_t));
    weights_ = upload_.weights(op.weights());
    bias_ = upload_.weights(op.epilogue() ? op.epilogue()->bias() : 0);
    upload_.commit();
  }
  const char* kernel_name() const override { return "cuda_sliding_channel_conv_direct"; }
  uint64_t macs() const override {
    return static_cast<uint64_t>(kernels::saturating_product({shape_.batch, shape_.out_channels, window_, static_cast<int64_t>(kernels::conv_useful_pairs(shape_.h)),
                                                          static_cast<int64_t>(kernels::conv_useful_pairs(shape_.w))}));
  }
  uint64_t repacked_weight_bytes() const override { return upload_.device_bytes(); }
  void run(const RunContext& ctx) override {
    sliding_channel_conv(shape_, window_, period_, upload_.as<int>(starts_), upload_.as<float>(weights_), upload_.as<float>(bias_), activation_,
                         ctx.f32(input_), ctx.f32(output_), stream_of(ctx));
  }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  KernelUpload upload_;
  int input_, output_;
  kernels::ConvShape shape_;
  int window_, period_ = 1;
  ActivationParams activation_;
  int starts_ = -1, weights_ = -1, bias_ = -1;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_SlidingChannelConv>(const KernelArgs& a) {
  return std::make_unique<SlidingChannelConvCuda>(a, *a.op.kind_as_SlidingChannelConv());
}

}  // namespace edgegan::cuda
