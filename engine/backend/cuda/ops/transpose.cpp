// Transpose on the GPU: a permutation of storage axes.
#include "engine/backend/cuda/cuda_kernel.h"
#include "engine/ops/op_kernel_util.h"
#include "kernels_cuda/transpose/transpose.h"

namespace edgegan::cuda {
namespace {

class TransposeCuda final : public OpKernel {
 public:
  TransposeCuda(const KernelArgs& a, const schema::Transpose& op) : input_(op.input()), output_(op.output()), shape_(transpose_shape(a, op)) {}
  const char* kernel_name() const override { return "cuda_transpose"; }
  void run(const RunContext& ctx) override { transpose(shape_, ctx.f32(input_), ctx.f32(output_), stream_of(ctx)); }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  int input_, output_;
  kernels::TransposeShape shape_;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Transpose>(const KernelArgs& a) {
  return std::make_unique<TransposeCuda>(a, *a.op.kind_as_Transpose());
}

}  // namespace edgegan::cuda
