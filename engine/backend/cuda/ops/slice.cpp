// Slice on the GPU: a strided slice along one storage axis, negative steps included.
#include "engine/backend/cuda/cuda_kernel.h"
#include "engine/ops/op_kernel_util.h"
#include "kernels_cuda/slice/slice.h"

namespace edgegan::cuda {
namespace {

class SliceCuda final : public OpKernel {
 public:
  SliceCuda(const KernelArgs& a, const schema::Slice& op) : input_(op.input()), output_(op.output()), shape_(slice_shape(a, op)) {}
  const char* kernel_name() const override { return "cuda_slice"; }
  void run(const RunContext& ctx) override { slice(shape_, ctx.f32(input_), ctx.f32(output_), stream_of(ctx)); }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  int input_, output_;
  kernels::SliceShape shape_;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Slice>(const KernelArgs& a) {
  return std::make_unique<SliceCuda>(a, *a.op.kind_as_Slice());
}

}  // namespace edgegan::cuda
