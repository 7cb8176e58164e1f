// UnaryMath on the GPU: element-wise sqrt, rsqrt, exp, log, erf, pow, abs, neg.
#include "engine/backend/cuda/cuda_kernel.h"
#include "engine/ops/op_kernel_util.h"
#include "kernels_cuda/unary_math/unary_math.h"

namespace edgegan::cuda {
namespace {

class UnaryMathCuda final : public OpKernel {
 public:
  UnaryMathCuda(const KernelArgs& a, const schema::UnaryMath& op) : input_(op.input()), output_(op.output()), count_(a.batch * a.tensor(op.input()).per_sample), op_(static_cast<kernels::UnaryMathOp>(op.operation())), exponent_(op.exponent()) {}
  const char* kernel_name() const override { return "cuda_unary_math"; }
  void run(const RunContext& ctx) override { unary_math(count_, op_, exponent_, ctx.f32(input_), ctx.f32(output_), stream_of(ctx)); }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  int input_, output_;
  int64_t count_;
  kernels::UnaryMathOp op_;
  float exponent_;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_UnaryMath>(const KernelArgs& a) {
  return std::make_unique<UnaryMathCuda>(a, *a.op.kind_as_UnaryMath());
}

}  // namespace edgegan::cuda
