// SlidingChannelConv (DSXplore's SCC) on Vulkan: the direct shader reading each output
// channel's window of input channels in place, wrapping at Cin; the window table (one
// period of starts) is uploaded once with the weights ([Cout][kh][kw][window], float32).
// Bias and activation in the epilogue.
#include "engine/backend/vulkan/vulkan_kernel.h"

namespace edgegan::vulkan {
namespace {

class SlidingChannelConvVulkan final : public OpKernel {
 public:
  SlidingChannelConvVulkan(const KernelArgs& a, Context& c, const schema::SlidingChannelConv& op)
      : upload_(a, c, 23), input_(op.input()), output_(op.output()), shape_(a.conv_shape(op)), window_(op.window()) {
    const kernels::ConvShape& s = shape_;
    const std::vector<int32_t> starts(op.starts()->begin(), op.starts()->end());
    const int64_t values[] = {s.h.in, s.w.in, s.in_channels, s.h.out, s.w.out, s.out_channels, s.h.kernel, s.w.kernel,
                              s.h.stride, s.w.stride, s.h.dilation, s.w.dilation, s.h.pad_begin, s.w.pad_begin, window_,
                              static_cast<int64_t>(starts.size())};
    for (int i = 0; i < 16; ++i) upload_.set(i, static_cast<int32_t>(values[i]));
    upload_.set(16, upload_.ints(starts.data(), starts.size()));
    upload_.set(17, upload_.weights(op.weights()));
    set_epilogue(upload_, op.epilogue(), 18, 21, 22);
    upload_.commit();
  }
  const char* kernel_name() const override { return "vulkan_sliding_channel_conv_direct"; }
  uint64_t macs() const override {
    return static_cast<uint64_t>(kernels::saturating_product({shape_.batch, shape_.out_channels, window_, static_cast<int64_t>(kernels::conv_useful_pairs(shape_.h)),
                                                              static_cast<int64_t>(kernels::conv_useful_pairs(shape_.w))}));
  }
  uint64_t repacked_weight_bytes() const override { return upload_.device_bytes(); }
  void run(const RunContext& ctx) override {
    Push p;
    p.params = upload_.address();
    p.tensors[0] = address_of(ctx, input_);
    p.tensors[1] = address_of(ctx, output_);
    stream_of(ctx).dispatch("sliding_channel_conv", upload_.half(), p, static_cast<uint64_t>(shape_.batch * shape_.h.out * shape_.w.out * shape_.out_channels));
  }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  Upload upload_;
  int input_, output_;
  kernels::ConvShape shape_;
  int64_t window_;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_SlidingChannelConv>(const KernelArgs& a, Context& c) {
  return std::make_unique<SlidingChannelConvVulkan>(a, c, *a.op.kind_as_SlidingChannelConv());
}

}  // namespace edgegan::vulkan
