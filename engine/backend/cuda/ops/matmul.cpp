// MatMul on the GPU: batched products of run-time tensors through their strides.
#include "engine/backend/cuda/cuda_kernel.h"
#include "engine/ops/matmul_rank5.h"
#include "kernels_cuda/matmul/matmul.h"

namespace edgegan::cuda {
namespace {

class MatMulCuda final : public OpKernel {
 public:
  MatMulCuda(const KernelArgs& a, const schema::MatMul& op) : a_(op.a()), b_(op.b()), output_(op.output()), shape_(matmul_shape_any_rank(a, op)) {
    // The launch grid: matrices on z, row tiles on y (at most 65535 each).
    if (shape_.batch[0] * shape_.batch[1] > 65535 || (shape_.m + 15) / 16 > 65535)
      throw KernelRefusal("more than 65535 matrices or 16-row tiles in one product");
  }
  const char* kernel_name() const override { return "cuda_matmul"; }
  void run(const RunContext& ctx) override { matmul(shape_, ctx.f32(a_), ctx.f32(b_), ctx.f32(output_), stream_of(ctx)); }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  int a_, b_, output_;
  kernels::MatMulShape shape_;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_MatMul>(const KernelArgs& a) {
  return std::make_unique<MatMulCuda>(a, *a.op.kind_as_MatMul());
}

}  // namespace edgegan::cuda
