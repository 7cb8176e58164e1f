// MatMul on Vulkan: batched products of two run-time tensors read through their strides
// (rank-4 operands are stored NHWC; a batch dim of size 1 broadcasts), one invocation
// per output value (kernels_vulkan/matmul).
#include "engine/backend/vulkan/vulkan_kernel.h"
#include "engine/ops/matmul_rank5.h"

namespace edgegan::vulkan {
namespace {

class MatMulVulkan final : public SingleDispatchKernel {
 public:
  // Parameter block: the second batch dim, m, n, k, then per operand (a, b, y) its
  // strides: batch 0, batch 1, row, column.
  MatMulVulkan(const KernelArgs& args, Context& c, const schema::MatMul& op)
      : SingleDispatchKernel(args, c, "matmul", 16, {op.a(), op.b(), op.output()}) {
    const kernels::MatMulShape s = matmul_shape_any_rank(args, op);
    upload_.set(0, static_cast<int32_t>(s.batch[1]));
    upload_.set(1, static_cast<int32_t>(s.m));
    upload_.set(2, static_cast<int32_t>(s.n));
    upload_.set(3, static_cast<int32_t>(s.k));
    int slot = 4;
    for (const kernels::MatrixStrides* t : {&s.a, &s.b, &s.y})
      for (int64_t stride : {t->batch[0], t->batch[1], t->row, t->col}) upload_.set(slot++, static_cast<int32_t>(stride));
    count_ = s.batch[0] * s.batch[1] * s.m * s.n;
    upload_.commit();
  }
  const char* kernel_name() const override { return "vulkan_matmul"; }
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_MatMul>(const KernelArgs& a, Context& c) {
  return std::make_unique<MatMulVulkan>(a, c, *a.op.kind_as_MatMul());
}

}  // namespace edgegan::vulkan
