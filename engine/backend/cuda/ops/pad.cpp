// Pad on the GPU: every mode of the CPU's (constant, reflect, edge, wrap; asymmetric
// and negative pads) through per-axis source tables built once from kernels::pad_source.
#include "engine/backend/cuda/cuda_kernel.h"
#include "engine/ops/pad_geometry.h"
#include "kernels_cuda/pad/pad.h"

namespace edgegan::cuda {
namespace {

class PadCuda final : public OpKernel {
 public:
  PadCuda(const KernelArgs& a, const schema::Pad& op) : upload_(a), input_(op.input()), output_(op.output()) {
    const TensorDesc& x = a.tensor(op.input());
    shape_.batch = a.batch;
    shape_.channels = x.dims[3];
    const PadGeometry g = pad_geometry(op, x.dims, op.size_of() >= 0 ? a.tensor(op.size_of()).dims : std::vector<int64_t>{});
    shape_.h = g.h;
    shape_.w = g.w;
    shape_.mode = static_cast<kernels::PadMode>(op.mode());
    shape_.value = op.value();
    // Kept until commit() has copied them.
    const std::vector<int32_t> h_source = pad_source_table(shape_.h, shape_.mode), w_source = pad_source_table(shape_.w, shape_.mode);
    h_source_ = upload_.bytes(h_source.data(), h_source.size() * sizeof(int32_t));
    w_source_ = upload_.bytes(w_source.data(), w_source.size() * sizeof(int32_t));
    upload_.commit();
  }
  const char* kernel_name() const override { return "cuda_pad"; }
  uint64_t repacked_weight_bytes() const override { return upload_.device_bytes(); }
  void run(const RunContext& ctx) override {
    pad(shape_, upload_.as<int32_t>(h_source_), upload_.as<int32_t>(w_source_), ctx.f32(input_), ctx.f32(output_), stream_of(ctx));
  }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  KernelUpload upload_;
  int input_, output_;
  kernels::PadShape shape_;
  int h_source_ = -1, w_source_ = -1;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Pad>(const KernelArgs& a) {
  return std::make_unique<PadCuda>(a, *a.op.kind_as_Pad());
}

}  // namespace edgegan::cuda
