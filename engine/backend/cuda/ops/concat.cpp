// Concat on the GPU: per input, `outer` rows of one contiguous chunk copied into
// their column of the output (one strided device copy per input).
#include "engine/backend/cuda/cuda_kernel.h"
#include "engine/ops/op_kernel_util.h"

namespace edgegan::cuda {
namespace {

class ConcatCuda final : public OpKernel {
 public:
  ConcatCuda(const KernelArgs& a, const schema::Concat& op) : output_(op.output()), inputs_(op.inputs()->begin(), op.inputs()->end()) {
    const ConcatLayout layout = concat_layout(a, op);
    outer_ = layout.outer;
    chunks_ = layout.chunks;
    for (int64_t c : chunks_) row_ += c;
  }
  const char* kernel_name() const override { return "cuda_concat"; }
  void run(const RunContext& ctx) override {
    float* y = ctx.f32(output_);
    for (size_t k = 0; k < inputs_.size(); ++k) {
      if (chunks_[k] > 0 && outer_ > 0)
        check_cuda(cudaMemcpy2DAsync(y, static_cast<size_t>(row_) * 4, ctx.f32(inputs_[k]), static_cast<size_t>(chunks_[k]) * 4,
                                     static_cast<size_t>(chunks_[k]) * 4, static_cast<size_t>(outer_), cudaMemcpyDeviceToDevice, stream_of(ctx)),
                   "concat copy");
      y += chunks_[k];
    }
  }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  int output_;
  std::vector<int> inputs_;
  std::vector<int64_t> chunks_;
  int64_t outer_ = 1, row_ = 0;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Concat>(const KernelArgs& a) {
  return std::make_unique<ConcatCuda>(a, *a.op.kind_as_Concat());
}

}  // namespace edgegan::cuda
