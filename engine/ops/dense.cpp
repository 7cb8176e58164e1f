// Dense: y[N, out] = x[N, in] · W[in][out] + bias, then activation; over the last axis of
// row-major [N, ..., in] (a Linear on tokens) each of the N·... rows alike.
#include "engine/ops/dense_rows.h"
#include "engine/ops/half_route.h"
#include "engine/ops/op_def.h"
#include "engine/ops/op_kernel_util.h"
#include "engine/ops/op_text.h"
#include "engine/ops/op_validator.h"
#include "kernels_cpu/dense/dense.h"

namespace edgegan {
namespace {

class DenseKernel final : public OpKernel {
 public:
  DenseKernel(const OpDef& def, const KernelArgs& a, const schema::Dense& op)
      : overflow_(def, a.op), halves_(half_storage(a) && !a.training), input_(op.input()), output_(op.output()), batch_(dense_rows(a, op)), in_(op.in_features()), out_(op.out_features()),
        weights_(a.weights.f32(op.weights())), epilogue_(a.epilogue(op.epilogue())) {
    scratch_.take(in_ * out_);  // dW
    scratch_.take(out_);        // db
    if (a.accumulates(0)) scratch_.take(batch_ * in_);
    // fp16: the input widened once, each column block narrowed.
    if (halves_) workspace_floats_ = cpu::dense_halves_workspace(batch_, in_, a.threads);
  }
  const char* kernel_name() const override { return halves_ ? "dense_f16" : "dense"; }
  uint64_t workspace_bytes() const override { return static_cast<uint64_t>(workspace_floats_) * 4; }
  bool stores_halves() const override { return halves_; }
  void check_run() override { overflow_.check(); }
  uint64_t macs() const override { return static_cast<uint64_t>(cpu::saturating_product({batch_, in_, out_})); }
  void run(const RunContext& ctx) override {
    if (halves_) {
      overflow_.clear();
      const auto* x = reinterpret_cast<const uint16_t*>((*ctx.tensors)[static_cast<size_t>(input_)]);
      auto* y = reinterpret_cast<uint16_t*>((*ctx.tensors)[static_cast<size_t>(output_)]);
      return overflow_.add(cpu::dense_halves(batch_, in_, out_, x, weights_, y, epilogue_, ctx.threads, reinterpret_cast<float*>(ctx.workspace)));
    }
    cpu::dense(batch_, in_, out_, ctx.f32(input_), weights_, ctx.f32(output_), epilogue_, ctx.threads);
  }
  uint64_t backward_workspace_bytes() const override { return scratch_.bytes(); }
  void backward(const BackwardContext& b) override {
    float* g = b.grad(output_);
    cpu::activation_backward(batch_ * out_, b.ctx.f32(output_), g, epilogue_.activation, epilogue_.alpha, epilogue_.beta);
    ScratchLayout scratch(b.ctx.workspace);
    float* dw = scratch.take(in_ * out_);
    float* db = scratch.take(out_);
    float* dx = b.wants(0) ? input_gradient_target(b, input_, 0, b.accumulates(0) ? scratch.take(batch_ * in_) : nullptr) : nullptr;
    cpu::dense_backward(batch_, in_, out_, b.ctx.f32(input_), weights_, g, dx, dw, epilogue_.bias ? db : nullptr);
    if (dx) finish_input_gradient(b, input_, 0, dx, batch_ * in_);
    if (!b.wants_parameters()) return;
    add_into(b.parameter_gradient(0), dw, in_ * out_);
    if (b.parameter_gradient(1)) add_into(b.parameter_gradient(1), db, out_);
  }

 private:
  HalfOverflow overflow_;  // the fp16 route's output past the half range
  bool halves_;            // an fp16 session's native route (dense_halves)
  int64_t workspace_floats_ = 0;
  int input_, output_;
  int64_t batch_, in_, out_;
  const float* weights_;
  cpu::Epilogue epilogue_;
  ScratchLayout scratch_;  // sizes only
};

class DenseDef final : public OpDef {
 public:
  const char* name() const override { return "Dense"; }
  std::vector<int> inputs(const schema::Op& op) const override { return {op.kind_as_Dense()->input()}; }
  int output(const schema::Op& op) const override { return op.kind_as_Dense()->output(); }
  void validate(const schema::Op& o, OpValidator& v) const override {
    const auto& op = *o.kind_as_Dense();
    const TensorDesc& x = v.use(op.input(), "input");
    v.expect_float(x);
    v.check_range(op.in_features(), 1, kMaxDim, "in_features");
    v.check_range(op.out_features(), 1, kMaxDim, "out_features");
    if (x.dims.size() < 2 || x.dims.back() != op.in_features())
      v.fail("input " + dims_text(x.dims) + " does not end with in_features " + std::to_string(op.in_features()));
    if (x.layout == Layout::kNHWC) v.fail("input is NHWC (a Dense reads row-major rows)");
    std::vector<int64_t> out = x.dims;
    out.front() = -1;
    out.back() = op.out_features();
    TensorDesc& y = v.define_output(op.output(), out);
    v.expect_float(y);
    if (y.layout != Layout::kRowMajor) v.fail("output is not row-major");
    v.expect_buffer(op.weights(), static_cast<uint64_t>(op.in_features()) * op.out_features(), "weights", false);
    v.check_epilogue(op.epilogue(), op.out_features());
  }
  void describe(const Model::Impl& m, const schema::Op& o, OpInfo& info) const override {
    const auto& d = *o.kind_as_Dense();
    info.attributes = std::to_string(d.in_features()) + "->" + std::to_string(d.out_features()) + epilogue_text(d.epilogue());
    info.weight_bytes = m.buffer_bytes(d.weights()) + (d.epilogue() ? m.buffer_bytes(d.epilogue()->bias()) : 0);
  }
  std::vector<ParameterSlot> parameters(const schema::Op& o) const override {
    const auto& d = *o.kind_as_Dense();
    return {{"weights", d.weights()}, {"bias", d.epilogue() ? d.epilogue()->bias() : 0u}};
  }
  std::unique_ptr<OpKernel> create_cpu_kernel(const KernelArgs& a) const override {
    return std::make_unique<DenseKernel>(*this, a, *a.op.kind_as_Dense());
  }
};

}  // namespace

template <>
const OpDef& op_definition<schema::OpKind_Dense>() {
  static const DenseDef def;
  return def;
}

}  // namespace edgegan
