// Reshape on the GPU, with ONNX (logical, NCHW) semantics as on the CPU: aliased when
// both storage orders are logical, otherwise re-ordered through logical order by
// batched transposes.
#include "engine/backend/cuda/cuda_kernel.h"
#include "kernels_cuda/reshape/reshape.h"

namespace edgegan::cuda {
namespace {

class ReshapeCuda final : public OpKernel {
 public:
  ReshapeCuda(const KernelArgs& a, const schema::Reshape& op)
      : input_(op.input()), output_(op.output()), batch_(a.batch), x_(a.tensor(op.input())), y_(a.tensor(op.output())) {}
  const char* kernel_name() const override { return output_aliases_input() ? "reshape_alias" : "cuda_reshape_relayout"; }
  bool output_aliases_input() const override { return x_.storage_is_logical() && y_.storage_is_logical(); }
  uint64_t workspace_bytes() const override { return needs_scratch() ? static_cast<uint64_t>(batch_ * x_.per_sample) * 4 : 0; }
  void run(const RunContext& ctx) override {
    if (output_aliases_input()) return;
    const float* x = ctx.f32(input_);
    float* y = ctx.f32(output_);
    cudaStream_t s = stream_of(ctx);
    const bool from_logical = x_.storage_is_logical(), to_logical = y_.storage_is_logical();
    if (from_logical) return transpose_samples(batch_, y_.dims[3], y_.dims[1] * y_.dims[2], x, y, s);  // NCHW -> NHWC
    if (to_logical) return transpose_samples(batch_, x_.dims[1] * x_.dims[2], x_.dims[3], x, y, s);    // NHWC -> NCHW
    float* logical = reinterpret_cast<float*>(ctx.workspace);
    transpose_samples(batch_, x_.dims[1] * x_.dims[2], x_.dims[3], x, logical, s);
    transpose_samples(batch_, y_.dims[3], y_.dims[1] * y_.dims[2], logical, y, s);
  }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  bool needs_scratch() const { return !x_.storage_is_logical() && !y_.storage_is_logical(); }
  int input_, output_;
  int64_t batch_;
  TensorDesc x_, y_;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Reshape>(const KernelArgs& a) {
  return std::make_unique<ReshapeCuda>(a, *a.op.kind_as_Reshape());
}

}  // namespace edgegan::cuda
