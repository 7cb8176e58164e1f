// UnaryMath: element-wise math on a run-time tensor (sqrt, rsqrt, exp, log, erf, pow with
// a constant exponent, abs, neg); no weights.
#include <cmath>

#include "engine/ops/op_def.h"
#include "engine/ops/op_kernel_util.h"
#include "engine/ops/op_text.h"
#include "engine/ops/op_validator.h"
#include "kernels_cpu/unary_math/unary_math.h"

namespace edgegan {
namespace {

static_assert(static_cast<int>(schema::UnaryMathOperation_MAX) + 1 == cpu::kUnaryMathOpCount &&
                  static_cast<int>(schema::UnaryMathOperation_Sqrt) == static_cast<int>(cpu::UnaryMathOp::kSqrt) &&
                  static_cast<int>(schema::UnaryMathOperation_Rsqrt) == static_cast<int>(cpu::UnaryMathOp::kRsqrt) &&
                  static_cast<int>(schema::UnaryMathOperation_Exp) == static_cast<int>(cpu::UnaryMathOp::kExp) &&
                  static_cast<int>(schema::UnaryMathOperation_Log) == static_cast<int>(cpu::UnaryMathOp::kLog) &&
                  static_cast<int>(schema::UnaryMathOperation_Erf) == static_cast<int>(cpu::UnaryMathOp::kErf) &&
                  static_cast<int>(schema::UnaryMathOperation_Pow) == static_cast<int>(cpu::UnaryMathOp::kPow) &&
                  static_cast<int>(schema::UnaryMathOperation_Abs) == static_cast<int>(cpu::UnaryMathOp::kAbs) &&
                  static_cast<int>(schema::UnaryMathOperation_Neg) == static_cast<int>(cpu::UnaryMathOp::kNeg),
              "schema::UnaryMathOperation and cpu::UnaryMathOp number the functions alike");

class UnaryMathKernel final : public OpKernel {
 public:
  UnaryMathKernel(const KernelArgs& a, const schema::UnaryMath& op)
      : input_(op.input()), output_(op.output()), count_(a.batch * a.tensor(op.input()).per_sample),
        op_(static_cast<cpu::UnaryMathOp>(op.operation())), exponent_(op.exponent()) {}
  const char* kernel_name() const override { return "unary_math"; }
  bool works_in_place() const override { return true; }  // inference only (the planner's rule)
  int in_place_input() const override { return input_; }
  void run(const RunContext& ctx) override { cpu::unary_math(count_, op_, exponent_, ctx.f32(input_), ctx.f32(output_), ctx.threads); }
  void backward(const BackwardContext& b) override {
    if (!b.wants(0)) return;
    cpu::unary_math_backward(count_, op_, exponent_, b.ctx.f32(input_), b.grad(output_), b.grad(input_), b.accumulates(0), b.ctx.threads);
  }

 private:
  int input_, output_;
  int64_t count_;
  cpu::UnaryMathOp op_;
  float exponent_;
};

const char* operation_name(schema::UnaryMathOperation o) {
  const char* name = schema::EnumNameUnaryMathOperation(o);
  return name && *name ? name : "?";
}

class UnaryMathDef final : public OpDef {
 public:
  const char* name() const override { return "UnaryMath"; }
  std::vector<int> inputs(const schema::Op& op) const override { return {op.kind_as_UnaryMath()->input()}; }
  int output(const schema::Op& op) const override { return op.kind_as_UnaryMath()->output(); }
  void validate(const schema::Op& o, OpValidator& v) const override {
    const auto& op = *o.kind_as_UnaryMath();
    if (op.operation() < schema::UnaryMathOperation_MIN || op.operation() > schema::UnaryMathOperation_MAX) v.fail("unknown operation");
    if (!std::isfinite(op.exponent())) v.fail("the exponent is not finite");
    const TensorDesc& x = v.use(op.input(), "input");
    const TensorDesc& y = v.define_output(op.output(), x.dims);
    v.expect_float(x);
    v.expect_float(y);
    if (y.layout != x.layout) v.fail("layout changes");
  }
  void describe(const Model::Impl&, const schema::Op& o, OpInfo& info) const override {
    const auto& op = *o.kind_as_UnaryMath();
    auto attrs = text_stream();
    attrs << operation_name(op.operation());
    if (op.operation() == schema::UnaryMathOperation_Pow) attrs << " " << op.exponent();
    info.attributes = attrs.str();
  }
  std::vector<ParameterSlot> parameters(const schema::Op&) const override { return {}; }
  std::unique_ptr<OpKernel> create_cpu_kernel(const KernelArgs& a) const override {
    return std::make_unique<UnaryMathKernel>(a, *a.op.kind_as_UnaryMath());
  }
};

}  // namespace

template <>
const OpDef& op_definition<schema::OpKind_UnaryMath>() {
  static const UnaryMathDef def;
  return def;
}

}  // namespace edgegan
