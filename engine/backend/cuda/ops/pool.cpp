// Pool on the GPU: max and average (pads, ceil_mode, count_include_pad, dilation,
// global windows) as the CPU defines them.
#include "engine/backend/cuda/cuda_kernel.h"
#include "kernels_cuda/pool/pool.h"

namespace edgegan::cuda {
namespace {

class PoolCuda final : public OpKernel {
 public:
  PoolCuda(const KernelArgs& a, const schema::Pool& op)
      : input_(op.input()), output_(op.output()), kind_(op.kind() == schema::PoolKind_Max ? kernels::PoolKind::kMax : kernels::PoolKind::kAverage),
        include_pad_(op.count_include_pad()) {
    const TensorDesc& x = a.tensor(op.input());
    const TensorDesc& y = a.tensor(op.output());
    shape_.batch = a.batch;
    shape_.channels = op.channels();
    shape_.h = {x.dims[1], op.kernel_h(), op.stride_h(), op.dilation_h(), op.pad_top(), op.pad_bottom(), y.dims[1]};
    shape_.w = {x.dims[2], op.kernel_w(), op.stride_w(), op.dilation_w(), op.pad_left(), op.pad_right(), y.dims[2]};
  }
  const char* kernel_name() const override { return kind_ == kernels::PoolKind::kMax ? "cuda_pool_max" : "cuda_pool_average"; }
  void run(const RunContext& ctx) override { pool(shape_, kind_, include_pad_, ctx.f32(input_), ctx.f32(output_), stream_of(ctx)); }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  int input_, output_;
  kernels::PoolKind kind_;
  bool include_pad_;
  kernels::PoolShape shape_;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Pool>(const KernelArgs& a) {
  return std::make_unique<PoolCuda>(a, *a.op.kind_as_Pool());
}

}  // namespace edgegan::cuda
