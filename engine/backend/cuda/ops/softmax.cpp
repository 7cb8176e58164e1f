// Softmax on the GPU along one storage axis.
#include "engine/backend/cuda/cuda_kernel.h"
#include "engine/ops/op_kernel_util.h"
#include "kernels_cuda/softmax/softmax.h"

namespace edgegan::cuda {
namespace {

class SoftmaxCuda final : public OpKernel {
 public:
  SoftmaxCuda(const KernelArgs& a, const schema::Softmax& op) : input_(op.input()), output_(op.output()), shape_(softmax_shape(a, op)) {}
  const char* kernel_name() const override { return "cuda_softmax"; }
  void run(const RunContext& ctx) override { softmax(shape_, ctx.f32(input_), ctx.f32(output_), stream_of(ctx)); }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  int input_, output_;
  kernels::SoftmaxShape shape_;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Softmax>(const KernelArgs& a) {
  return std::make_unique<SoftmaxCuda>(a, *a.op.kind_as_Softmax());
}

}  // namespace edgegan::cuda
