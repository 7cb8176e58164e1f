// Concat on Vulkan: per input, `outer` rows of one contiguous chunk copied into its
// columns of the output (kernels_vulkan/concat, one dispatch per input).
#include "engine/backend/vulkan/vulkan_kernel.h"
#include "engine/ops/op_kernel_util.h"

namespace edgegan::vulkan {
namespace {

class ConcatVulkan final : public OpKernel {
 public:
  ConcatVulkan(const KernelArgs& a, Context& c, const schema::Concat& op)
      : upload_(a, c, 1 + 2 * static_cast<int>(op.inputs()->size())), output_(op.output()), inputs_(op.inputs()->begin(), op.inputs()->end()) {
    const ConcatLayout layout = concat_layout(a, op);
    outer_ = layout.outer;
    chunks_ = layout.chunks;
    int64_t column = 0;
    for (size_t k = 0; k < chunks_.size(); ++k) {
      upload_.set(1 + 2 * static_cast<int>(k), static_cast<int32_t>(chunks_[k]));
      upload_.set(2 + 2 * static_cast<int>(k), static_cast<int32_t>(column));
      column += chunks_[k];
    }
    upload_.set(0, static_cast<int32_t>(column));
    upload_.commit();
  }
  const char* kernel_name() const override { return "vulkan_concat"; }
  uint64_t repacked_weight_bytes() const override { return upload_.device_bytes(); }
  void run(const RunContext& ctx) override {
    for (size_t k = 0; k < inputs_.size(); ++k) {
      Push p;
      p.params = upload_.address();
      p.tensors[0] = address_of(ctx, inputs_[k]);
      p.tensors[1] = address_of(ctx, output_);
      p.first = static_cast<uint32_t>(k);
      stream_of(ctx).dispatch("concat", upload_.half(), p, static_cast<uint64_t>(outer_ * chunks_[k]));
    }
  }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  Upload upload_;
  int output_;
  std::vector<int> inputs_;
  std::vector<int64_t> chunks_;
  int64_t outer_ = 1;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Concat>(const KernelArgs& a, Context& c) {
  return std::make_unique<ConcatVulkan>(a, c, *a.op.kind_as_Concat());
}

}  // namespace edgegan::vulkan
