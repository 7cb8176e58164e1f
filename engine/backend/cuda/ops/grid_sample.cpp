// GridSample on the GPU: every mode and padding, groups and offsets.
#include "engine/backend/cuda/cuda_kernel.h"
#include "engine/ops/op_kernel_util.h"
#include "kernels_cuda/grid_sample/grid_sample.h"

namespace edgegan::cuda {
namespace {

class GridSampleCuda final : public OpKernel {
 public:
  GridSampleCuda(const KernelArgs& a, const schema::GridSample& op) : input_(op.input()), grid_(op.grid()), output_(op.output()), shape_(grid_sample_shape(a, op)) {}
  const char* kernel_name() const override { return "cuda_grid_sample"; }
  void run(const RunContext& ctx) override { grid_sample(shape_, ctx.f32(input_), ctx.f32(grid_), ctx.f32(output_), stream_of(ctx)); }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  int input_, grid_, output_;
  kernels::GridSampleShape shape_;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_GridSample>(const KernelArgs& a) {
  return std::make_unique<GridSampleCuda>(a, *a.op.kind_as_GridSample());
}

}  // namespace edgegan::cuda
