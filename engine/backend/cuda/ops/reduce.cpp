// Reduce on the GPU: sum, mean, max or L2 norm over storage axes, one thread per output.
#include "engine/backend/cuda/cuda_kernel.h"
#include "engine/ops/op_kernel_util.h"
#include "kernels_cuda/reduce/reduce.h"

namespace edgegan::cuda {
namespace {

class ReduceCuda final : public OpKernel {
 public:
  ReduceCuda(const KernelArgs& a, const schema::Reduce& op) : input_(op.input()), output_(op.output()), op_(static_cast<kernels::ReduceOp>(op.operation())), shape_(reduce_shape(a, op)) {}
  const char* kernel_name() const override { return "cuda_reduce"; }
  void run(const RunContext& ctx) override { reduce(shape_, op_, ctx.f32(input_), ctx.f32(output_), stream_of(ctx)); }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  int input_, output_;
  kernels::ReduceOp op_;
  kernels::ReduceShape shape_;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Reduce>(const KernelArgs& a) {
  return std::make_unique<ReduceCuda>(a, *a.op.kind_as_Reduce());
}

}  // namespace edgegan::cuda
