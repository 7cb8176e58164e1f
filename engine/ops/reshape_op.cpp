// Reshape has ONNX (logical, NCHW) semantics. A tensor whose storage order equals
// its logical order (row-major, or NHWC with one channel or a 1×1 map) needs no
// data movement, so the output simply aliases the input buffer. Otherwise the
// data is put in logical order and, if the output is NHWC, re-ordered again.
#include "engine/ops/op_kernel.h"
#include "kernels_cpu/tensor_ops.h"

namespace edgegan {
namespace {

bool storage_is_logical(const TensorDesc& t) {
  return t.layout != Layout::kNHWC || t.dims[3] == 1 || t.dims[1] * t.dims[2] == 1;
}

class ReshapeKernel final : public OpKernel {
 public:
  ReshapeKernel(const Model::Impl& m, const schema::Reshape& op, int64_t batch)
      : input_(op.input()), output_(op.output()), batch_(batch),
        x_(m.tensors[static_cast<size_t>(op.input())]), y_(m.tensors[static_cast<size_t>(op.output())]) {}
  const char* kernel_name() const override { return output_aliases_input() ? "reshape_alias" : "reshape_relayout"; }
  bool output_aliases_input() const override { return storage_is_logical(x_) && storage_is_logical(y_); }
  uint64_t workspace_bytes() const override {
    return (!storage_is_logical(x_) && !storage_is_logical(y_)) ? static_cast<uint64_t>(batch_ * x_.per_sample) * 4 : 0;
  }
  void run(const RunContext& ctx) override {
    const float* x = ctx.f32(input_);
    float* y = ctx.f32(output_);
    const bool x_logical = storage_is_logical(x_), y_logical = storage_is_logical(y_);
    if (x_logical && y_logical) return;  // aliased: nothing moves
    if (x_logical) {
      cpu::nchw_to_nhwc(batch_, y_.dims[3], y_.dims[1], y_.dims[2], x, y);
    } else if (y_logical) {
      cpu::nhwc_to_nchw(batch_, x_.dims[3], x_.dims[1], x_.dims[2], x, y);
    } else {  // NHWC -> NHWC of another shape: through logical order in the workspace
      float* logical = reinterpret_cast<float*>(ctx.workspace);
      cpu::nhwc_to_nchw(batch_, x_.dims[3], x_.dims[1], x_.dims[2], x, logical);
      cpu::nchw_to_nhwc(batch_, y_.dims[3], y_.dims[1], y_.dims[2], logical, y);
    }
  }

 private:
  int input_, output_;
  int64_t batch_;
  const TensorDesc& x_;
  const TensorDesc& y_;
};

}  // namespace

std::unique_ptr<OpKernel> make_reshape(const Model::Impl& m, const schema::Reshape& op, int64_t batch) {
  return std::make_unique<ReshapeKernel>(m, op, batch);
}

}  // namespace edgegan
