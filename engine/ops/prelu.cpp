// PRelu: y = x > 0 ? x : slope[c] * x, a trainable slope per channel (or one for all).
#include "engine/ops/half_route.h"
#include "engine/ops/op_def.h"
#include "engine/ops/op_kernel_util.h"
#include "engine/ops/op_text.h"
#include "engine/ops/op_validator.h"
#include "kernels_cpu/prelu/prelu.h"

namespace edgegan {
namespace {

class PReluKernel final : public OpKernel {
 public:
  PReluKernel(const OpDef& def, const KernelArgs& a, const schema::PRelu& op)
      : input_(op.input()), output_(op.output()), channels_(op.channels()), pixels_(a.batch * a.tensor(op.input()).per_sample / channels_),
        slope_(a.weights.f32(op.slope())), halves_(half_storage(a)), overflow_(def, a.op) {}
  const char* kernel_name() const override { return halves_ ? "prelu_f16" : "prelu"; }
  bool stores_halves() const override { return halves_; }
  void check_run() override { overflow_.check(); }
  bool works_in_place() const override { return true; }
  int in_place_input() const override { return input_; }
  void run(const RunContext& ctx) override {
    if (!halves_) return cpu::prelu(pixels_, channels_, slope_, ctx.f32(input_), ctx.f32(output_), ctx.threads);
    overflow_.clear();
    overflow_.add(cpu::prelu_halves(pixels_, channels_, slope_, reinterpret_cast<const uint16_t*>(ctx.f32(input_)), reinterpret_cast<uint16_t*>(ctx.f32(output_)),
                                    ctx.threads));
  }
  void backward(const BackwardContext& b) override {
    // From the input's values (a training plan keeps every op's inputs until its backward).
    const bool params = b.wants_parameters();
    cpu::prelu_backward(pixels_, channels_, slope_, b.ctx.f32(input_), b.grad(output_), b.wants(0) ? b.grad(input_) : nullptr, b.accumulates(0),
                        params ? b.parameter_gradient(0) : nullptr, b.ctx.threads);
  }

 private:
  int input_, output_;
  int64_t channels_, pixels_;
  const float* slope_;
  bool halves_;  // an fp16 session's native route
  HalfOverflow overflow_;
};

class PReluDef final : public OpDef {
 public:
  const char* name() const override { return "PRelu"; }
  std::vector<int> inputs(const schema::Op& op) const override { return {op.kind_as_PRelu()->input()}; }
  int output(const schema::Op& op) const override { return op.kind_as_PRelu()->output(); }
  void validate(const schema::Op& o, OpValidator& v) const override {
    const auto& op = *o.kind_as_PRelu();
    const TensorDesc& x = v.use(op.input(), "input");
    const TensorDesc& y = v.define_output(op.output(), x.dims);
    v.expect_float(x);
    v.expect_float(y);
    if (y.layout != x.layout) v.fail("layout changes");
    const int64_t channels = x.layout == Layout::kNHWC ? x.dims[3] : (x.dims.size() > 1 ? x.dims[1] : 1);
    const bool per_channel = x.dims.size() == 2 || x.dims.size() == 4;
    if (op.channels() != 1 && (!per_channel || op.channels() != channels))
      v.fail("channels = " + std::to_string(op.channels()) + " is neither 1 nor the channels of input '" + x.name + "' " + dims_text(x.dims));
    v.expect_buffer(op.slope(), static_cast<uint64_t>(op.channels()), "slope", false);
  }
  void describe(const Model::Impl& m, const schema::Op& o, OpInfo& info) const override {
    const auto& p = *o.kind_as_PRelu();
    auto attrs = text_stream();
    attrs << p.channels() << (p.channels() == 1 ? " slope" : " slopes");
    info.attributes = attrs.str();
    info.weight_bytes = m.buffer_bytes(p.slope());
  }
  std::vector<ParameterSlot> parameters(const schema::Op& o) const override { return {{"slope", o.kind_as_PRelu()->slope()}}; }
  std::unique_ptr<OpKernel> create_cpu_kernel(const KernelArgs& a) const override { return std::make_unique<PReluKernel>(*this, a, *a.op.kind_as_PRelu()); }
};

}  // namespace

template <>
const OpDef& op_definition<schema::OpKind_PRelu>() {
  static const PReluDef def;
  return def;
}

}  // namespace edgegan
