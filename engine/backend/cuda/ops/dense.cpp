// Dense on the GPU: the implicit GEMM over 1x1 maps, y[rows][out] = x[rows][in] W[in][out]
// (rows: the batch, times the dims before the features of a Linear on tokens).
#include "engine/backend/cuda/cuda_kernel.h"
#include "engine/ops/dense_rows.h"

namespace edgegan::cuda {
namespace {

class DenseCuda final : public GemmOpKernel {
 public:
  DenseCuda(const KernelArgs& a, const schema::Dense& op)
      : GemmOpKernel(a, op.input(), op.output(), op.weights(), op.epilogue(),
                     dense_gemm_shape(static_cast<int>(dense_rows(a, op)), op.in_features(), op.out_features())),
        macs_(static_cast<uint64_t>(kernels::saturating_product({dense_rows(a, op), op.in_features(), op.out_features()}))) {}
  const char* kernel_name() const override { return "cuda_dense_gemm"; }
  uint64_t macs() const override { return macs_; }

 private:
  uint64_t macs_;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Dense>(const KernelArgs& a) {
  return std::make_unique<DenseCuda>(a, *a.op.kind_as_Dense());
}

}  // namespace edgegan::cuda
