// Reshape with ONNX (logical, NCHW) semantics. A tensor whose storage order equals
// its logical order (row-major, or NHWC with one channel or a 1×1 map) needs no data
// movement, so the output aliases the input's buffer. Otherwise the data is put in
// logical order and, if the output is NHWC, re-ordered again. The gradient takes the
// same way back.
#include "engine/ops/op_def.h"
#include "engine/ops/op_kernel_util.h"
#include "engine/ops/op_validator.h"
#include "kernels_cpu/reshape/reshape.h"

namespace edgegan {
namespace {

// Copies `batch` samples of tensor `from` (its storage order) into tensor `to`'s
// storage order, both read as the same logical elements. `scratch` holds
// batch*per_sample floats, used only when neither layout is logical.
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

class ReshapeKernel final : public OpKernel {
 public:
  ReshapeKernel(const KernelArgs& a, const schema::Reshape& op)
      : input_(op.input()), output_(op.output()), batch_(a.batch), x_(a.tensor(op.input())), y_(a.tensor(op.output())) {
    const int64_t count = batch_ * x_.per_sample;
    if (needs_scratch()) backward_scratch_.take(count);
    if (a.accumulates(0)) backward_scratch_.take(count);
  }
  const char* kernel_name() const override { return output_aliases_input() ? "reshape_alias" : "reshape_relayout"; }
  bool output_aliases_input() const override { return x_.storage_is_logical() && y_.storage_is_logical(); }
  uint64_t workspace_bytes() const override { return needs_scratch() ? static_cast<uint64_t>(batch_ * x_.per_sample) * 4 : 0; }
  void run(const RunContext& ctx) override {
    if (output_aliases_input()) return;  // aliased: nothing moves
    relayout(x_, y_, batch_, ctx.f32(input_), ctx.f32(output_), reinterpret_cast<float*>(ctx.workspace));
  }
  uint64_t backward_workspace_bytes() const override { return backward_scratch_.bytes(); }
  void backward(const BackwardContext& b) override {
    if (!b.wants(0)) return;
    const int64_t count = batch_ * x_.per_sample;
    ScratchLayout scratch(b.ctx.workspace);
    float* between = needs_scratch() ? scratch.take(count) : nullptr;
    float* dx = input_gradient_target(b, input_, 0, b.accumulates(0) ? scratch.take(count) : nullptr);
    relayout(y_, x_, batch_, b.grad(output_), dx, between);
    finish_input_gradient(b, input_, 0, dx, count);
  }

 private:
  bool needs_scratch() const { return !x_.storage_is_logical() && !y_.storage_is_logical(); }
  int input_, output_;
  int64_t batch_;
  const TensorDesc& x_;
  const TensorDesc& y_;
  ScratchLayout backward_scratch_;  // sizes only
};

class ReshapeDef final : public OpDef {
 public:
  const char* name() const override { return "Reshape"; }
  std::vector<int> inputs(const schema::Op& op) const override { return {op.kind_as_Reshape()->input()}; }
  int output(const schema::Op& op) const override { return op.kind_as_Reshape()->output(); }
  void validate(const schema::Op& o, OpValidator& v) const override {
    const auto& op = *o.kind_as_Reshape();
    const TensorDesc& x = v.use(op.input(), "input");
    TensorDesc& y = v.define(op.output());
    v.expect_float(x);
    v.expect_float(y);
    if (x.per_sample != y.per_sample && v.resizing()) v.fail("its target shape " + dims_text(y.dims) + " is fixed in the file; the input is now " + dims_text(x.dims));
    if (x.per_sample != y.per_sample) v.fail("reshape from " + dims_text(x.dims) + " to " + dims_text(y.dims) + " changes the element count");
  }
  void describe(const Model::Impl&, const schema::Op&, OpInfo&) const override {}
  std::vector<ParameterSlot> parameters(const schema::Op&) const override { return {}; }
  std::unique_ptr<OpKernel> create_cpu_kernel(const KernelArgs& a) const override {
    return std::make_unique<ReshapeKernel>(a, *a.op.kind_as_Reshape());
  }
};

}  // namespace

template <>
const OpDef& op_definition<schema::OpKind_Reshape>() {
  static const ReshapeDef def;
  return def;
}

}  // namespace edgegan
