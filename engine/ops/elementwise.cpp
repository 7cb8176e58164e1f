// Elementwise: an activation that could not be fused into a producer, as its own pass.
#include "engine/ops/half_route.h"
#include "engine/ops/op_def.h"
#include "engine/ops/op_kernel_util.h"
#include "engine/ops/op_text.h"
#include "engine/ops/op_validator.h"
#include "kernels_cpu/elementwise/elementwise.h"

namespace edgegan {
namespace {

class ElementwiseKernel final : public OpKernel {
 public:
  ElementwiseKernel(const OpDef& def, const KernelArgs& a, const schema::Elementwise& op)
      : input_(op.input()), output_(op.output()), count_(a.batch * a.tensor(op.input()).per_sample), activation_(to_activation(op.activation())),
        alpha_(op.alpha()), beta_(op.beta()), halves_(half_storage(a)), overflow_(def, a.op) {}
  const char* kernel_name() const override { return halves_ ? "elementwise_activation_f16" : "elementwise_activation"; }
  bool stores_halves() const override { return halves_; }
  void check_run() override { overflow_.check(); }
  bool works_in_place() const override { return true; }
  int in_place_input() const override { return input_; }
  void run(const RunContext& ctx) override {
    if (!halves_) return cpu::elementwise_activation(count_, ctx.f32(input_), ctx.f32(output_), activation_, alpha_, beta_, ctx.threads);
    overflow_.clear();
    overflow_.add(cpu::elementwise_activation_halves(count_, reinterpret_cast<const uint16_t*>(ctx.f32(input_)), reinterpret_cast<uint16_t*>(ctx.f32(output_)),
                                                     activation_, alpha_, beta_, ctx.threads));
  }
  void backward(const BackwardContext& b) override {
    float* g = b.grad(output_);
    // From the output where the activation allows it, else from the input (HardSwish,
    // Mish); a training plan keeps both until this backward.
    if (cpu::activation_invertible(activation_)) cpu::activation_backward(count_, b.ctx.f32(output_), g, activation_, alpha_, beta_);
    else cpu::activation_backward_from_input(count_, b.ctx.f32(input_), g, activation_, alpha_, beta_);
    if (!b.wants(0)) return;
    if (b.accumulates(0)) add_into(b.grad(input_), g, count_);
    else std::copy(g, g + count_, b.grad(input_));
  }

 private:
  int input_, output_;
  int64_t count_;
  cpu::Activation activation_;
  float alpha_, beta_;
  bool halves_;  // an fp16 session's native route
  HalfOverflow overflow_;
};

class ElementwiseDef final : public OpDef {
 public:
  const char* name() const override { return "Elementwise"; }
  std::vector<int> inputs(const schema::Op& op) const override { return {op.kind_as_Elementwise()->input()}; }
  int output(const schema::Op& op) const override { return op.kind_as_Elementwise()->output(); }
  void validate(const schema::Op& o, OpValidator& v) const override {
    const auto& op = *o.kind_as_Elementwise();
    const TensorDesc& x = v.use(op.input(), "input");
    const TensorDesc& y = v.define_output(op.output(), x.dims);
    v.expect_float(x);
    v.expect_float(y);
    if (y.layout != x.layout) v.fail("layout changes");
    v.check_activation(op.activation(), op.alpha(), op.beta());
  }
  void describe(const Model::Impl&, const schema::Op& o, OpInfo& info) const override {
    const auto& e = *o.kind_as_Elementwise();
    info.attributes = e.activation() > schema::Activation_Sigmoid ? activation_text(e.activation(), e.alpha(), e.beta()).substr(1)
                                                                 : std::string(activation_name(e.activation()));
  }
  std::vector<ParameterSlot> parameters(const schema::Op&) const override { return {}; }
  std::unique_ptr<OpKernel> create_cpu_kernel(const KernelArgs& a) const override {
    return std::make_unique<ElementwiseKernel>(*this, a, *a.op.kind_as_Elementwise());
  }
};

}  // namespace

template <>
const OpDef& op_definition<schema::OpKind_Elementwise>() {
  static const ElementwiseDef def;
  return def;
}

}  // namespace edgegan
