// UnaryMath on Vulkan: element-wise sqrt, rsqrt, exp, log, erf, pow, abs, neg
// (kernels_vulkan/unary_math); may run in place.
#include "engine/backend/vulkan/vulkan_kernel.h"
#include "kernels_common/unary_math.h"

namespace edgegan::vulkan {
namespace {

class UnaryMathVulkan final : public SingleDispatchKernel {
 public:
  UnaryMathVulkan(const KernelArgs& a, Context& c, const schema::UnaryMath& op)
      : SingleDispatchKernel(a, c, "unary_math", 2, {op.input(), op.output()}, a.batch * a.tensor(op.input()).per_sample) {
    upload_.set(0, static_cast<int32_t>(op.operation()));
    upload_.set_f(1, op.exponent());
    upload_.commit();
  }
  const char* kernel_name() const override { return "vulkan_unary_math"; }
  bool works_in_place() const override { return true; }
  int in_place_input() const override { return tensor(0); }
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_UnaryMath>(const KernelArgs& a, Context& c) {
  static_assert(kernels::kUnaryMathOpCount == 8, "kernels_vulkan/unary_math numbers the functions as kernels_common/unary_math.h");
  return std::make_unique<UnaryMathVulkan>(a, c, *a.op.kind_as_UnaryMath());
}

}  // namespace edgegan::vulkan
