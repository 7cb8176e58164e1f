// Conv2D on Vulkan: the direct shader (kernels_vulkan/conv2d), one invocation per output
// value over the file's [kh][kw][Cin/groups][Cout] weights, with the epilogue fused:
// bias, any activation or a per-channel PRelu slope, and the residual. A fused input map
// (a nearest Resize and/or a reflect, edge or wrap Pad folded into the convolution) is
// read in place through the per-axis index tables both GPU backends build on the host.
#include "engine/backend/vulkan/vulkan_kernel.h"
#include "engine/ops/op_kernel_util.h"
#include "kernels_common/conv_input_map_table.h"

namespace edgegan::vulkan {
namespace {

class Conv2DVulkan final : public OpKernel {
 public:
  Conv2DVulkan(const KernelArgs& a, Context& c, const schema::Conv2D& op)
      : upload_(a, c, 27), input_(op.input()), output_(op.output()), residual_(op.residual()), shape_(conv2d_shape(a, op)), groups_(op.groups()) {
    const kernels::ConvShape& s = shape_;
    const TensorDesc& x = a.tensor(op.input());
    upload_.set(23, -1);
    upload_.set(25, static_cast<int32_t>(x.dims[1]));
    upload_.set(26, static_cast<int32_t>(x.dims[2]));
    if (has_input_map(op)) {
      const auto mode = static_cast<kernels::PadMode>(op.input_pad_mode());
      std::vector<int32_t> rows(static_cast<size_t>(s.h.in)), cols(static_cast<size_t>(s.w.in));
      kernels::conv_input_map_table(x.dims[1], map_axis_h(op), mode, rows.data());
      kernels::conv_input_map_table(x.dims[2], map_axis_w(op), mode, cols.data());
      upload_.set(23, upload_.ints(rows.data(), rows.size()));
      upload_.set(24, upload_.ints(cols.data(), cols.size()));
      mapped_ = true;
    }
    const int64_t values[] = {s.batch, s.h.in, s.w.in, s.in_channels, s.h.out, s.w.out, s.out_channels, s.h.kernel, s.w.kernel,
                              s.h.stride, s.w.stride, s.h.dilation, s.w.dilation, s.h.pad_begin, s.w.pad_begin, op.groups()};
    for (int i = 0; i < 16; ++i) upload_.set(i, static_cast<int32_t>(values[i]));
    upload_.set(19, upload_.weights(op.weights()));
    set_epilogue(upload_, op.epilogue(), 16, 20, 21);
    upload_.set(22, residual_ >= 0 ? 1 : 0);
    upload_.commit();
  }
  const char* kernel_name() const override { return mapped_ ? "vulkan_conv2d_direct_input_map" : "vulkan_conv2d_direct"; }
  uint64_t macs() const override { return conv2d_macs(shape_) / static_cast<uint64_t>(groups_); }
  uint64_t repacked_weight_bytes() const override { return upload_.device_bytes(); }
  void run(const RunContext& ctx) override {
    Push p;
    p.params = upload_.address();
    p.tensors[0] = address_of(ctx, input_);
    p.tensors[1] = address_of(ctx, output_);
    p.tensors[2] = residual_ >= 0 ? address_of(ctx, residual_) : 0;
    stream_of(ctx).dispatch("conv2d", upload_.half(), p, static_cast<uint64_t>(shape_.batch * shape_.h.out * shape_.w.out * shape_.out_channels));
  }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  Upload upload_;
  int input_, output_, residual_;
  kernels::ConvShape shape_;
  int groups_;
  bool mapped_ = false;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Conv2D>(const KernelArgs& a, Context& c) {
  return std::make_unique<Conv2DVulkan>(a, c, *a.op.kind_as_Conv2D());
}

}  // namespace edgegan::vulkan
