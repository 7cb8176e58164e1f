// Slice on the GPU: a strided slice along one storage axis, negative steps included.
#include "engine/backend/cuda/cuda_kernel.h"
#include "kernels_cuda/slice/slice.h"

namespace edgegan::cuda {
namespace {

class SliceCuda final : public OpKernel {
 public:
  SliceCuda(const KernelArgs& a, const schema::Slice& op) : input_(op.input()), output_(op.output()) {
    const TensorDesc& x = a.tensor(op.input());
    const size_t axis = static_cast<size_t>(op.axis());
    shape_.outer = a.batch;
    for (size_t k = 1; k < axis; ++k) shape_.outer *= x.dims[k];
    shape_.length = x.dims[axis];
    for (size_t k = axis + 1; k < x.dims.size(); ++k) shape_.inner *= x.dims[k];
    shape_.start = op.start();
    shape_.step = op.step();
    shape_.count = a.tensor(op.output()).dims[axis];
  }
  const char* kernel_name() const override { return "cuda_slice"; }
  void run(const RunContext& ctx) override { slice(shape_, ctx.f32(input_), ctx.f32(output_), stream_of(ctx)); }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  int input_, output_;
  cpu::SliceShape shape_;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Slice>(const KernelArgs& a) {
  return std::make_unique<SliceCuda>(a, *a.op.kind_as_Slice());
}

}  // namespace edgegan::cuda
