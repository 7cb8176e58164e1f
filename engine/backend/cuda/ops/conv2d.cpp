// Conv2D on the GPU: one implicit-GEMM task over the [kh][kw][Cin][Cout] weights,
// bias, activation and a fused residual in the epilogue.
#include "engine/backend/cuda/cuda_kernel.h"
#include "engine/ops/op_kernel_util.h"

namespace edgegan::cuda {
namespace {

ConvGemmShape gemm_shape(const cpu::ConvShape& s) {
  return conv2d_gemm_shape(static_cast<int>(s.batch), static_cast<int>(s.h.in), static_cast<int>(s.w.in), static_cast<int>(s.in_channels),
                           static_cast<int>(s.h.out), static_cast<int>(s.w.out), static_cast<int>(s.out_channels), static_cast<int>(s.h.kernel),
                           static_cast<int>(s.w.kernel), static_cast<int>(s.h.stride), static_cast<int>(s.w.stride), static_cast<int>(s.h.dilation),
                           static_cast<int>(s.w.dilation), static_cast<int>(s.h.pad_begin), static_cast<int>(s.w.pad_begin));
}

class Conv2DCuda final : public GemmOpKernel {
 public:
  Conv2DCuda(const KernelArgs& a, const schema::Conv2D& op)
      : GemmOpKernel(a, op.input(), op.output(), op.weights(), op.epilogue(), gemm_shape(a.conv_shape(op)), op.residual()), macs_(conv2d_macs(a.conv_shape(op))) {}
  const char* kernel_name() const override { return "cuda_conv2d_implicit_gemm"; }
  uint64_t macs() const override { return macs_; }

 private:
  uint64_t macs_;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Conv2D>(const KernelArgs& a) {
  const auto& op = *a.op.kind_as_Conv2D();
  if (op.groups() != 1)  // the implicit GEMM reads every input channel for every output channel
    throw Error("CUDA backend: Conv2D" + (a.op.name() ? " '" + a.op.name()->str() + "'" : std::string()) + " has groups = " +
                std::to_string(op.groups()) + ": grouped and depthwise convolutions run on the CPU backend only");
  const bool input_map = op.input_upsample_h() != 1 || op.input_upsample_w() != 1 || op.input_pad_top() || op.input_pad_left() ||
                         op.input_pad_bottom() || op.input_pad_right();
  if (input_map)  // the implicit GEMM addresses its input directly
    throw Error("CUDA backend: Conv2D" + (a.op.name() ? " '" + a.op.name()->str() + "'" : std::string()) +
                " reads its input through a fused input map (a Pad or Resize folded into it): such convolutions run on the CPU backend only");
  return std::make_unique<Conv2DCuda>(a, *a.op.kind_as_Conv2D());
}

}  // namespace edgegan::cuda
