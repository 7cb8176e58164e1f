// Reshape has ONNX (logical, NCHW) semantics. A tensor whose storage order equals
// its logical order (row-major, or NHWC with one channel or a 1×1 map) needs no
// data movement, so the output simply aliases the input buffer. Otherwise the
// data is put in logical order and, if the output is NHWC, re-ordered again.
#include <algorithm>

#include "engine/ops/op_kernel.h"
#include "kernels_cpu/reshape/reshape.h"

namespace edgegan {

void relayout(const TensorDesc& from, const TensorDesc& to, int64_t batch, const float* x, float* y, float* scratch) {
  const bool from_logical = from.storage_is_logical(), to_logical = to.storage_is_logical();
  if (from_logical && to_logical) {
    std::copy(x, x + batch * from.per_sample, y);
  } else if (from_logical) {
    cpu::nchw_to_nhwc(batch, to.dims[3], to.dims[1], to.dims[2], x, y);
  } else if (to_logical) {
    cpu::nhwc_to_nchw(batch, from.dims[3], from.dims[1], from.dims[2], x, y);
  } else {  // NHWC -> NHWC of another shape: through logical order
    cpu::nhwc_to_nchw(batch, from.dims[3], from.dims[1], from.dims[2], x, scratch);
    cpu::nchw_to_nhwc(batch, to.dims[3], to.dims[1], to.dims[2], scratch, y);
  }
}

namespace {

class ReshapeKernel final : public OpKernel {
 public:
  ReshapeKernel(const Model::Impl& m, const schema::Reshape& op, int64_t batch)
      : input_(op.input()), output_(op.output()), batch_(batch),
        x_(m.tensors[static_cast<size_t>(op.input())]), y_(m.tensors[static_cast<size_t>(op.output())]) {}
  const char* kernel_name() const override { return output_aliases_input() ? "reshape_alias" : "reshape_relayout"; }
  bool output_aliases_input() const override { return x_.storage_is_logical() && y_.storage_is_logical(); }
  uint64_t workspace_bytes() const override {
    return (!x_.storage_is_logical() && !y_.storage_is_logical()) ? static_cast<uint64_t>(batch_ * x_.per_sample) * 4 : 0;
  }
  void run(const RunContext& ctx) override {
    if (output_aliases_input()) return;  // aliased: nothing moves
    relayout(x_, y_, batch_, ctx.f32(input_), ctx.f32(output_), reinterpret_cast<float*>(ctx.workspace));
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
