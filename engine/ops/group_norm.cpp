// GroupNorm: per sample and group of channels, y = act((x - mean) / sqrt(var + eps) * scale[c] + shift[c])
// on an NHWC map, then an optional residual tensor added (a fused residual/skip Add; only
// without activation); InstanceNorm is groups == channels.
#include <cmath>

#include "engine/ops/op_def.h"
#include "engine/ops/op_kernel_util.h"
#include "engine/ops/op_text.h"
#include "engine/ops/op_validator.h"
#include "kernels_cpu/group_norm/group_norm.h"

namespace edgegan {
namespace {

class GroupNormKernel final : public OpKernel {
 public:
  GroupNormKernel(const KernelArgs& a, const schema::GroupNorm& op)
      : input_(op.input()), output_(op.output()), residual_(op.residual()), scale_(a.weights.f32(op.scale())), shift_(a.weights.f32(op.shift())),
        epsilon_(op.epsilon()), activation_(to_activation(op.activation())), alpha_(op.alpha()), beta_(op.beta()) {
    const TensorDesc& x = a.tensor(op.input());
    shape_ = {a.batch, x.dims[1] * x.dims[2], op.channels(), op.groups()};
  }
  const char* kernel_name() const override { return "group_norm"; }
  uint64_t workspace_bytes() const override { return static_cast<uint64_t>(cpu::group_norm_workspace(shape_)) * 4; }
  // In place over the input, never over the residual (the kernel would survive it: each
  // element is read before it is written; the planner's rule stays simple).
  bool works_in_place() const override { return residual_ != input_; }
  int in_place_input() const override { return input_; }
  void run(const RunContext& ctx) override {
    cpu::group_norm(shape_, ctx.f32(input_), scale_, shift_, epsilon_, ctx.f32(output_), activation_, alpha_, beta_,
                    reinterpret_cast<float*>(ctx.workspace), ctx.threads, residual_ >= 0 ? ctx.f32(residual_) : nullptr);
  }
  uint64_t backward_workspace_bytes() const override { return static_cast<uint64_t>(cpu::group_norm_backward_workspace(shape_)) * 4; }
  void backward(const BackwardContext& b) override {
    float* g = b.grad(output_);
    cpu::activation_backward(shape_.batch * shape_.pixels * shape_.channels, b.ctx.f32(output_), g, activation_, alpha_, beta_);
    float* dx = b.wants(0) ? b.grad(input_) : nullptr;
    const bool params = b.wants_parameters();
    cpu::group_norm_backward(shape_, b.ctx.f32(input_), scale_, epsilon_, g, dx, dx && b.accumulates(0), params ? b.parameter_gradient(0) : nullptr,
                             params ? b.parameter_gradient(1) : nullptr, reinterpret_cast<float*>(b.ctx.workspace), b.ctx.threads);
    // No activation with a residual: g is still dy, the residual's gradient.
    if (residual_ >= 0) residual_gradient(b, residual_, 1, g, shape_.batch * shape_.pixels * shape_.channels);
  }

 private:
  int input_, output_, residual_;  // residual_: -1 for none
  cpu::GroupNormShape shape_;
  const float* scale_;
  const float* shift_;
  float epsilon_;
  cpu::Activation activation_;
  float alpha_, beta_;
};

class GroupNormDef final : public OpDef {
 public:
  const char* name() const override { return "GroupNorm"; }
  std::vector<int> inputs(const schema::Op& o) const override {
    const auto& op = *o.kind_as_GroupNorm();
    if (op.residual() >= 0) return {op.input(), op.residual()};
    return {op.input()};
  }
  int output(const schema::Op& op) const override { return op.kind_as_GroupNorm()->output(); }
  void validate(const schema::Op& o, OpValidator& v) const override {
    const auto& op = *o.kind_as_GroupNorm();
    const TensorDesc& x = v.use(op.input(), "input");
    v.expect_float(x);
    if (x.layout != Layout::kNHWC) v.fail("input must be an NHWC image tensor");
    const TensorDesc* residual = v.use_residual(op.residual());
    const TensorDesc& y = v.define_output(op.output(), x.dims);
    v.expect_float(y);
    if (op.channels() != x.dims[3]) v.fail("channels = " + std::to_string(op.channels()) + " does not match input '" + x.name + "' " + dims_text(x.dims));
    v.check_range(op.groups(), 1, op.channels(), "groups");
    if (op.channels() % op.groups() != 0)
      v.fail("groups = " + std::to_string(op.groups()) + " does not divide channels = " + std::to_string(op.channels()));
    if (!std::isfinite(op.epsilon()) || op.epsilon() < 0.f) v.fail("epsilon must be finite and non-negative");
    v.expect_buffer(op.scale(), static_cast<uint64_t>(op.channels()), "scale", false);
    v.expect_buffer(op.shift(), static_cast<uint64_t>(op.channels()), "shift", false);
    v.check_activation(op.activation(), op.alpha(), op.beta());
    if (!cpu::activation_invertible(to_activation(op.activation())))
      v.fail(std::string("activation ") + activation_name(op.activation()) + " cannot be fused (its gradient needs the input)");
    v.check_residual(residual, y, op.activation());
  }
  void describe(const Model::Impl& m, const schema::Op& o, OpInfo& info) const override {
    const auto& a = *o.kind_as_GroupNorm();
    auto attrs = text_stream();
    attrs << a.channels() << " channels";
    if (a.groups() == a.channels()) attrs << " instance";
    else attrs << " " << a.groups() << (a.groups() == 1 ? " group" : " groups");
    attrs << " eps " << a.epsilon() << activation_text(a.activation(), a.alpha(), a.beta()) << residual_text(m, a.residual());
    info.attributes = attrs.str();
    info.weight_bytes = m.buffer_bytes(a.scale()) + m.buffer_bytes(a.shift());
  }
  std::vector<ParameterSlot> parameters(const schema::Op& o) const override {
    return {{"scale", o.kind_as_GroupNorm()->scale()}, {"shift", o.kind_as_GroupNorm()->shift()}};
  }
  std::unique_ptr<OpKernel> create_cpu_kernel(const KernelArgs& a) const override {
    return std::make_unique<GroupNormKernel>(a, *a.op.kind_as_GroupNorm());
  }
};

}  // namespace

template <>
const OpDef& op_definition<schema::OpKind_GroupNorm>() {
  static const GroupNormDef def;
  return def;
}

}  // namespace edgegan
