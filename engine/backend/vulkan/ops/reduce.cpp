// Reduce on Vulkan: sum, mean, max or L2 norm over storage axes, one invocation per
// output (kernels_vulkan/reduce).
#include "engine/backend/vulkan/vulkan_kernel.h"
#include "engine/ops/op_kernel_util.h"

namespace edgegan::vulkan {
namespace {

class ReduceVulkan final : public SingleDispatchKernel {
 public:
  // Parameter block: operation, rank, values per output, then per axis its size and
  // whether it is reduced.
  ReduceVulkan(const KernelArgs& a, Context& c, const schema::Reduce& op)
      : SingleDispatchKernel(a, c, "reduce", 3 + 2 * kernels::kReduceMaxRank, {op.input(), op.output()}) {
    const kernels::ReduceShape s = reduce_shape(a, op);
    upload_.set(0, static_cast<int32_t>(op.operation()));
    upload_.set(1, s.rank);
    upload_.set(2, static_cast<int32_t>(kernels::reduce_count(s)));
    for (int k = 0; k < s.rank; ++k) {
      upload_.set(3 + 2 * k, static_cast<int32_t>(s.dims[k]));
      upload_.set(4 + 2 * k, s.reduced[k] ? 1 : 0);
    }
    count_ = kernels::reduce_output_elements(s);
    upload_.commit();
  }
  const char* kernel_name() const override { return "vulkan_reduce"; }
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Reduce>(const KernelArgs& a, Context& c) {
  static_assert(static_cast<int>(kernels::ReduceOp::kSum) == 0 && static_cast<int>(kernels::ReduceOp::kMean) == 1 &&
                    static_cast<int>(kernels::ReduceOp::kMax) == 2 && static_cast<int>(kernels::ReduceOp::kL2) == 3,
                "kernels_vulkan/reduce numbers the operations as kernels_common/reduce_shape.h");
  return std::make_unique<ReduceVulkan>(a, c, *a.op.kind_as_Reduce());
}

}  // namespace edgegan::vulkan
