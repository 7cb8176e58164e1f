// Elementwise on the GPU: an activation with no producer to fuse into; may run in place.
#include "engine/backend/cuda/cuda_kernel.h"
#include "kernels_cuda/elementwise/elementwise.h"

namespace edgegan::cuda {
namespace {

class ElementwiseCuda final : public OpKernel {
 public:
  ElementwiseCuda(const KernelArgs& a, const schema::Elementwise& op)
      : input_(op.input()), output_(op.output()), count_(a.batch * a.tensor(op.input()).per_sample), activation_(activation_params(op.activation(), op.alpha(), op.beta())) {}
  const char* kernel_name() const override { return "cuda_activation"; }
  bool works_in_place() const override { return true; }
  int in_place_input() const override { return input_; }
  void run(const RunContext& ctx) override { activation(count_, ctx.f32(input_), ctx.f32(output_), activation_, stream_of(ctx)); }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  int input_, output_;
  int64_t count_;
  ActivationParams activation_;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Elementwise>(const KernelArgs& a) {
  return std::make_unique<ElementwiseCuda>(a, *a.op.kind_as_Elementwise());
}

}  // namespace edgegan::cuda
