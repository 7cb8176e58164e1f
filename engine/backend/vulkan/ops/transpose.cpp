// Transpose on Vulkan: a permutation of storage axes, one invocation per output value
// (kernels_vulkan/transpose).
#include "engine/backend/vulkan/vulkan_kernel.h"
#include "engine/ops/op_kernel_util.h"

namespace edgegan::vulkan {
namespace {

class TransposeVulkan final : public SingleDispatchKernel {
 public:
  // Parameter block: rank, then per output axis its size and the input's stride along it.
  TransposeVulkan(const KernelArgs& a, Context& c, const schema::Transpose& op)
      : SingleDispatchKernel(a, c, "permute", 1 + 2 * kernels::kTransposeMaxRank, {op.input(), op.output()}) {
    const kernels::TransposeShape s = transpose_shape(a, op);
    int64_t dims[kernels::kTransposeMaxRank], strides[kernels::kTransposeMaxRank];
    kernels::transpose_output(s, dims, strides);
    upload_.set(0, s.rank);
    for (int k = 0; k < s.rank; ++k) {
      upload_.set(1 + 2 * k, static_cast<int32_t>(dims[k]));
      upload_.set(2 + 2 * k, static_cast<int32_t>(strides[k]));
    }
    count_ = kernels::transpose_elements(s);
    upload_.commit();
  }
  const char* kernel_name() const override { return "vulkan_transpose"; }
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Transpose>(const KernelArgs& a, Context& c) {
  return std::make_unique<TransposeVulkan>(a, c, *a.op.kind_as_Transpose());
}

}  // namespace edgegan::vulkan
