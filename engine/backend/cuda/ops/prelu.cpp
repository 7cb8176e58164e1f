// PRelu on the GPU: a slope per channel (or one for all) uploaded once; may run in place.
#include "engine/backend/cuda/cuda_kernel.h"
#include "kernels_cuda/prelu/prelu.h"

namespace edgegan::cuda {
namespace {

class PReluCuda final : public OpKernel {
 public:
  PReluCuda(const KernelArgs& a, const schema::PRelu& op)
      : upload_(a), input_(op.input()), output_(op.output()), channels_(op.channels()),
        pixels_(a.batch * a.tensor(op.input()).per_sample / op.channels()) {
    slope_ = upload_.weights(op.slope());
    upload_.commit();
  }
  const char* kernel_name() const override { return "cuda_prelu"; }
  bool works_in_place() const override { return true; }
  int in_place_input() const override { return input_; }
  uint64_t repacked_weight_bytes() const override { return upload_.device_bytes(); }
  void run(const RunContext& ctx) override { prelu(pixels_, channels_, upload_.as<float>(slope_), ctx.f32(input_), ctx.f32(output_), stream_of(ctx)); }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  KernelUpload upload_;
  int input_, output_;
  int64_t channels_, pixels_;
  int slope_ = -1;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_PRelu>(const KernelArgs& a) {
  return std::make_unique<PReluCuda>(a, *a.op.kind_as_PRelu());
}

}  // namespace edgegan::cuda
