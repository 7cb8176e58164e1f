// Resize on Vulkan: every mode the CPU runs (nearest with each rounding, linear, cubic
// with its coefficient and exclude_outside, under each coordinate transform), from the
// CPU's own per-axis tap tables (kernels_common/resize_shape.h), built on the host and
// uploaded once.
#include "engine/backend/vulkan/vulkan_kernel.h"
#include "engine/ops/op_kernel_util.h"
#include "kernels_common/resize_shape.h"

namespace edgegan::vulkan {
namespace {

class ResizeVulkan final : public OpKernel {
 public:
  ResizeVulkan(const KernelArgs& a, Context& c, const schema::Resize& op)
      : upload_(a, c, 10), input_(op.input()), output_(op.output()), shape_(resize_shape(op, a.tensor(op.input()), a.tensor(op.output()), a.batch)) {
    std::vector<uint32_t> storage(static_cast<size_t>(kernels::resize_table_bytes(shape_) / 4));
    const kernels::ResizeTables t = kernels::resize_build_tables(shape_, storage.data());
    taps_ = t.taps;
    const int64_t values[] = {shape_.h.in, shape_.w.in, shape_.channels, shape_.h.out, shape_.w.out, t.taps};
    for (int i = 0; i < 6; ++i) upload_.set(i, static_cast<int32_t>(values[i]));
    const uint64_t h = static_cast<uint64_t>(shape_.h.out * t.taps), w = static_cast<uint64_t>(shape_.w.out * t.taps);
    upload_.set(6, upload_.ints(t.h_index, h));
    upload_.set(7, upload_.floats(t.h_weight, h));
    upload_.set(8, upload_.ints(t.w_index, w));
    upload_.set(9, upload_.floats(t.w_weight, w));
    upload_.commit();
  }
  const char* kernel_name() const override { return "vulkan_resize"; }
  uint64_t repacked_weight_bytes() const override { return upload_.device_bytes(); }
  uint64_t macs() const override {
    if (shape_.params.mode == kernels::ResizeMode::kNearest) return 0;
    const uint64_t taps = static_cast<uint64_t>(taps_);
    return static_cast<uint64_t>(shape_.batch * shape_.h.out * shape_.w.out * shape_.channels) * taps * (taps + 1);
  }
  void run(const RunContext& ctx) override {
    Push p;
    p.params = upload_.address();
    p.tensors[0] = address_of(ctx, input_);
    p.tensors[1] = address_of(ctx, output_);
    stream_of(ctx).dispatch("resize", upload_.half(), p, static_cast<uint64_t>(shape_.batch * shape_.h.out * shape_.w.out * shape_.channels));
  }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  Upload upload_;
  int input_, output_;
  kernels::ResizeShape shape_;
  int taps_ = 1;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Resize>(const KernelArgs& a, Context& c) {
  return std::make_unique<ResizeVulkan>(a, c, *a.op.kind_as_Resize());
}

}  // namespace edgegan::vulkan
