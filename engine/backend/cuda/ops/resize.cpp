// Resize on the GPU: every mode the CPU runs (nearest with each rounding, linear,
// cubic with its coefficient and exclude_outside, under each coordinate transform),
// from the CPU's own per-axis tap tables, built on the host and uploaded once.
#include "engine/backend/cuda/cuda_kernel.h"
#include "engine/ops/op_kernel_util.h"
#include "kernels_cuda/resize/resize.h"

namespace edgegan::cuda {
namespace {


class ResizeCuda final : public OpKernel {
 public:
  ResizeCuda(const KernelArgs& a, const schema::Resize& op)
      : upload_(a), input_(op.input()), output_(op.output()), shape_(resize_shape(op, a.tensor(op.input()), a.tensor(op.output()), a.batch)) {
    // The CPU's tables (4-byte entries), kept until commit() has copied the forward ones.
    std::vector<uint32_t> storage(static_cast<size_t>(kernels::resize_table_bytes(shape_) / 4));
    const kernels::ResizeTables t = kernels::resize_build_tables(shape_, storage.data());
    taps_ = t.taps;
    const uint64_t h_bytes = static_cast<uint64_t>(shape_.h.out) * t.taps * 4, w_bytes = static_cast<uint64_t>(shape_.w.out) * t.taps * 4;
    h_index_ = upload_.bytes(t.h_index, h_bytes);
    h_weight_ = upload_.bytes(t.h_weight, h_bytes);
    w_index_ = upload_.bytes(t.w_index, w_bytes);
    w_weight_ = upload_.bytes(t.w_weight, w_bytes);
    upload_.commit();
  }
  const char* kernel_name() const override { return "cuda_resize"; }
  uint64_t repacked_weight_bytes() const override { return upload_.device_bytes(); }
  uint64_t macs() const override {
    if (shape_.params.mode == kernels::ResizeMode::kNearest) return 0;
    const uint64_t taps = static_cast<uint64_t>(taps_);
    return static_cast<uint64_t>(shape_.batch * shape_.h.out * shape_.w.out * shape_.channels) * taps * (taps + 1);
  }
  void run(const RunContext& ctx) override {
    ResizeDeviceTables t;
    t.taps = taps_;
    t.h_index = upload_.as<int32_t>(h_index_);
    t.h_weight = upload_.as<float>(h_weight_);
    t.w_index = upload_.as<int32_t>(w_index_);
    t.w_weight = upload_.as<float>(w_weight_);
    resize(shape_, t, ctx.f32(input_), ctx.f32(output_), stream_of(ctx));
  }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  KernelUpload upload_;
  int input_, output_;
  kernels::ResizeShape shape_;
  int taps_ = 1;
  int h_index_ = -1, h_weight_ = -1, w_index_ = -1, w_weight_ = -1;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Resize>(const KernelArgs& a) {
  return std::make_unique<ResizeCuda>(a, *a.op.kind_as_Resize());
}

}  // namespace edgegan::cuda
