// Dense on Vulkan: the Conv2D shader over a 1x1 map (kernels_vulkan/conv2d), y[N][out] =
// x[N][in] W[in][out] with the fused bias and activation; the file's [in][out] weights
// are a 1x1 kernel's.
#include "engine/backend/vulkan/vulkan_kernel.h"
#include "engine/ops/dense_rows.h"
#include "kernels_common/conv_geometry.h"

namespace edgegan::vulkan {
namespace {

class DenseVulkan final : public OpKernel {
 public:
  DenseVulkan(const KernelArgs& a, Context& c, const schema::Dense& op)
      : upload_(a, c, 27), input_(op.input()), output_(op.output()), batch_(dense_rows(a, op)), in_(op.in_features()), out_(op.out_features()) {
    // N, H, W, Cin, OH, OW, Cout, KH, KW, SH, SW, DH, DW, PT, PL, groups
    const int64_t values[] = {batch_, 1, 1, in_, 1, 1, out_, 1, 1, 1, 1, 1, 1, 0, 0, 1};
    for (int i = 0; i < 16; ++i) upload_.set(i, static_cast<int32_t>(values[i]));
    upload_.set(19, upload_.weights(op.weights()));
    set_epilogue(upload_, op.epilogue(), 16, 20, 21);
    upload_.set(22, 0);
    upload_.set(23, -1);  // no input map; the source is the 1x1 map itself
    upload_.set(25, 1);
    upload_.set(26, 1);
    upload_.commit();
  }
  const char* kernel_name() const override { return "vulkan_dense_direct"; }
  uint64_t macs() const override { return static_cast<uint64_t>(kernels::saturating_product({batch_, in_, out_})); }
  uint64_t repacked_weight_bytes() const override { return upload_.device_bytes(); }
  void run(const RunContext& ctx) override {
    Push p;
    p.params = upload_.address();
    p.tensors[0] = address_of(ctx, input_);
    p.tensors[1] = address_of(ctx, output_);
    stream_of(ctx).dispatch("conv2d", upload_.half(), p, static_cast<uint64_t>(batch_ * out_));
  }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  Upload upload_;
  int input_, output_;
  int64_t batch_, in_, out_;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Dense>(const KernelArgs& a, Context& c) {
  return std::make_unique<DenseVulkan>(a, c, *a.op.kind_as_Dense());
}

}  // namespace edgegan::vulkan
