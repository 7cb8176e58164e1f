// ChannelAffine: y = act(x * scale[c] + shift[c]), a BatchNorm that had no producer to fold into.
#include "engine/ops/half_route.h"
#include "engine/ops/op_def.h"
#include "engine/ops/op_kernel_util.h"
#include "engine/ops/op_text.h"
#include "engine/ops/op_validator.h"
#include "kernels_cpu/channel_affine/channel_affine.h"

namespace edgegan {
namespace {

class ChannelAffineKernel final : public OpKernel {
 public:
  // Rank-4 activations are always NHWC, so channels are the innermost dimension for rank 2 and 4 alike.
  ChannelAffineKernel(const OpDef& def, const KernelArgs& a, const schema::ChannelAffine& op)
      : input_(op.input()), output_(op.output()), channels_(op.channels()), pixels_(a.batch * a.tensor(op.input()).per_sample / channels_),
        scale_(a.weights.f32(op.scale())), shift_(a.weights.f32(op.shift())), activation_(to_activation(op.activation())), alpha_(op.alpha()), beta_(op.beta()),
        halves_(half_storage(a)), overflow_(def, a.op) {}
  const char* kernel_name() const override { return halves_ ? "channel_affine_f16" : "channel_affine"; }
  bool stores_halves() const override { return halves_; }
  void check_run() override { overflow_.check(); }
  bool works_in_place() const override { return true; }
  int in_place_input() const override { return input_; }
  void run(const RunContext& ctx) override {
    if (!halves_) return cpu::channel_affine(pixels_, channels_, scale_, shift_, ctx.f32(input_), ctx.f32(output_), activation_, alpha_, beta_);
    overflow_.clear();
    overflow_.add(cpu::channel_affine_halves(pixels_, channels_, scale_, shift_, reinterpret_cast<const uint16_t*>(ctx.f32(input_)),
                                             reinterpret_cast<uint16_t*>(ctx.f32(output_)), activation_, alpha_, beta_));
  }
  void backward(const BackwardContext& b) override {
    const int64_t count = pixels_ * channels_;
    float* g = b.grad(output_);
    cpu::activation_backward(count, b.ctx.f32(output_), g, activation_, alpha_, beta_);
    float* dx = b.wants(0) ? b.grad(input_) : nullptr;
    if (dx && !b.accumulates(0)) std::fill(dx, dx + count, 0.f);  // the kernel adds
    const bool params = b.wants_parameters();
    cpu::channel_affine_backward(pixels_, channels_, scale_, b.ctx.f32(input_), g, dx, params ? b.parameter_gradient(0) : nullptr,
                                 params ? b.parameter_gradient(1) : nullptr);
  }

 private:
  int input_, output_;
  int64_t channels_, pixels_;
  const float* scale_;
  const float* shift_;
  cpu::Activation activation_;
  float alpha_, beta_;
  bool halves_;  // an fp16 session's native route
  HalfOverflow overflow_;
};

class ChannelAffineDef final : public OpDef {
 public:
  const char* name() const override { return "ChannelAffine"; }
  std::vector<int> inputs(const schema::Op& op) const override { return {op.kind_as_ChannelAffine()->input()}; }
  int output(const schema::Op& op) const override { return op.kind_as_ChannelAffine()->output(); }
  void validate(const schema::Op& o, OpValidator& v) const override {
    const auto& op = *o.kind_as_ChannelAffine();
    const TensorDesc& x = v.use(op.input(), "input");
    const TensorDesc& y = v.define_output(op.output(), x.dims);
    v.expect_float(x);
    v.expect_float(y);
    const int64_t channels = x.layout == Layout::kNHWC ? x.dims[3] : (x.dims.size() > 1 ? x.dims[1] : 1);
    if (op.channels() != channels || x.dims.size() == 3 || x.dims.size() > 4)
      v.fail("channels = " + std::to_string(op.channels()) + " does not match input '" + x.name + "' " + dims_text(x.dims));
    v.expect_buffer(op.scale(), static_cast<uint64_t>(channels), "scale", false);
    v.expect_buffer(op.shift(), static_cast<uint64_t>(channels), "shift", false);
    v.check_activation(op.activation(), op.alpha(), op.beta());
    if (!cpu::activation_invertible(to_activation(op.activation()))) v.fail(std::string("activation ") + activation_name(op.activation()) + " cannot be fused (its gradient needs the input)");
  }
  void describe(const Model::Impl& m, const schema::Op& o, OpInfo& info) const override {
    const auto& a = *o.kind_as_ChannelAffine();
    auto attrs = text_stream();
    attrs << a.channels() << " channels";
    if (a.activation() > schema::Activation_Sigmoid) attrs << activation_text(a.activation(), a.alpha(), a.beta());
    else if (a.activation() != schema::Activation_None) attrs << " " << activation_name(a.activation());
    info.attributes = attrs.str();
    info.weight_bytes = m.buffer_bytes(a.scale()) + m.buffer_bytes(a.shift());
  }
  std::vector<ParameterSlot> parameters(const schema::Op& o) const override {
    return {{"scale", o.kind_as_ChannelAffine()->scale()}, {"shift", o.kind_as_ChannelAffine()->shift()}};
  }
  std::unique_ptr<OpKernel> create_cpu_kernel(const KernelArgs& a) const override {
    return std::make_unique<ChannelAffineKernel>(*this, a, *a.op.kind_as_ChannelAffine());
  }
};

}  // namespace

template <>
const OpDef& op_definition<schema::OpKind_ChannelAffine>() {
  static const ChannelAffineDef def;
  return def;
}

}  // namespace edgegan
