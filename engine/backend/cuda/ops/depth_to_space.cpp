// DepthToSpace on the GPU: both directions (space_to_depth too), DCR and CRD orders.
#include "engine/backend/cuda/cuda_kernel.h"
#include "engine/ops/op_kernel_util.h"
#include "kernels_cuda/depth_to_space/depth_to_space.h"

namespace edgegan::cuda {
namespace {

class DepthToSpaceCuda final : public OpKernel {
 public:
  DepthToSpaceCuda(const KernelArgs& a, const schema::DepthToSpace& op) : input_(op.input()), output_(op.output()), to_space_(!op.space_to_depth()) {
    shape_ = depth_to_space_shape(a, op);
  }
  const char* kernel_name() const override { return to_space_ ? "cuda_depth_to_space" : "cuda_space_to_depth"; }
  void run(const RunContext& ctx) override { depth_to_space(shape_, to_space_, ctx.f32(input_), ctx.f32(output_), stream_of(ctx)); }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  int input_, output_;
  bool to_space_;
  kernels::DepthToSpaceShape shape_;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_DepthToSpace>(const KernelArgs& a) {
  return std::make_unique<DepthToSpaceCuda>(a, *a.op.kind_as_DepthToSpace());
}

}  // namespace edgegan::cuda
