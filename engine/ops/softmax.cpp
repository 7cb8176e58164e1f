// Softmax along one storage axis of a run-time tensor; no weights.
#include "engine/ops/op_def.h"
#include "engine/ops/op_kernel_util.h"
#include "engine/ops/op_text.h"
#include "engine/ops/op_validator.h"
#include "kernels_cpu/softmax/softmax.h"

namespace edgegan {
namespace {

class SoftmaxKernel final : public OpKernel {
 public:
  SoftmaxKernel(const KernelArgs& a, const schema::Softmax& op) : input_(op.input()), output_(op.output()), shape_(softmax_shape(a, op)) {}
  const char* kernel_name() const override { return "softmax"; }
  void run(const RunContext& ctx) override { cpu::softmax(shape_, ctx.f32(input_), ctx.f32(output_), ctx.threads); }
  void backward(const BackwardContext& b) override {
    if (!b.wants(0)) return;
    cpu::softmax_backward(shape_, b.ctx.f32(output_), b.grad(output_), b.grad(input_), b.accumulates(0), b.ctx.threads);
  }

 private:
  int input_, output_;
  cpu::SoftmaxShape shape_;
};

class SoftmaxDef final : public OpDef {
 public:
  const char* name() const override { return "Softmax"; }
  std::vector<int> inputs(const schema::Op& op) const override { return {op.kind_as_Softmax()->input()}; }
  int output(const schema::Op& op) const override { return op.kind_as_Softmax()->output(); }
  void validate(const schema::Op& o, OpValidator& v) const override {
    const auto& op = *o.kind_as_Softmax();
    const TensorDesc& x = v.use(op.input(), "input");
    v.expect_float(x);
    v.check_range(op.axis(), 1, static_cast<int64_t>(x.dims.size()) - 1, "axis");
    const TensorDesc& y = v.define_output(op.output(), x.dims);
    v.expect_float(y);
    if (y.layout != x.layout) v.fail("layout changes");
  }
  void describe(const Model::Impl&, const schema::Op& o, OpInfo& info) const override {
    info.attributes = "axis " + std::to_string(o.kind_as_Softmax()->axis());
  }
  std::vector<ParameterSlot> parameters(const schema::Op&) const override { return {}; }
  std::unique_ptr<OpKernel> create_cpu_kernel(const KernelArgs& a) const override { return std::make_unique<SoftmaxKernel>(a, *a.op.kind_as_Softmax()); }
};

}  // namespace

template <>
const OpDef& op_definition<schema::OpKind_Softmax>() {
  static const SoftmaxDef def;
  return def;
}

}  // namespace edgegan
