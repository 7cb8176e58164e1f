// Reduce: sum, mean, max or L2 norm over storage axes of a run-time tensor, keeping
// its rank (reduced axes become 1); no weights.
#include "engine/ops/op_def.h"
#include "engine/ops/op_kernel_util.h"
#include "engine/ops/op_text.h"
#include "engine/ops/op_validator.h"
#include "kernels_cpu/reduce/reduce.h"

namespace edgegan {
namespace {

static_assert(static_cast<int>(schema::ReduceOperation_Sum) == static_cast<int>(cpu::ReduceOp::kSum) &&
                  static_cast<int>(schema::ReduceOperation_Mean) == static_cast<int>(cpu::ReduceOp::kMean) &&
                  static_cast<int>(schema::ReduceOperation_Max) == static_cast<int>(cpu::ReduceOp::kMax) &&
                  static_cast<int>(schema::ReduceOperation_L2) == static_cast<int>(cpu::ReduceOp::kL2),
              "schema::ReduceOperation and cpu::ReduceOp number the reductions alike");

class ReduceKernel final : public OpKernel {
 public:
  ReduceKernel(const KernelArgs& a, const schema::Reduce& op)
      : input_(op.input()), output_(op.output()), op_(static_cast<cpu::ReduceOp>(op.operation())), shape_(reduce_shape(a, op)) {}
  const char* kernel_name() const override { return "reduce"; }
  void run(const RunContext& ctx) override { cpu::reduce(shape_, op_, ctx.f32(input_), ctx.f32(output_), ctx.threads); }
  uint64_t backward_workspace_bytes() const override { return static_cast<uint64_t>(cpu::reduce_backward_workspace(shape_, op_)) * 4; }
  void backward(const BackwardContext& b) override {
    if (!b.wants(0)) return;
    cpu::reduce_backward(shape_, op_, b.ctx.f32(input_), b.ctx.f32(output_), b.grad(output_), b.grad(input_), b.accumulates(0),
                         reinterpret_cast<float*>(b.ctx.workspace));
  }

 private:
  int input_, output_;
  cpu::ReduceOp op_;
  cpu::ReduceShape shape_;
};

class ReduceDef final : public OpDef {
 public:
  const char* name() const override { return "Reduce"; }
  std::vector<int> inputs(const schema::Op& op) const override { return {op.kind_as_Reduce()->input()}; }
  int output(const schema::Op& op) const override { return op.kind_as_Reduce()->output(); }
  void validate(const schema::Op& o, OpValidator& v) const override {
    const auto& op = *o.kind_as_Reduce();
    if (op.operation() < schema::ReduceOperation_MIN || op.operation() > schema::ReduceOperation_MAX) v.fail("unknown operation");
    const TensorDesc& x = v.use(op.input(), "input");
    v.expect_float(x);
    const int rank = static_cast<int>(x.dims.size());
    if (rank > cpu::kReduceMaxRank) v.fail("rank " + std::to_string(rank) + " is above " + std::to_string(cpu::kReduceMaxRank));
    if (!op.axes() || op.axes()->size() == 0) v.fail("no axes");
    std::vector<int64_t> dims = x.dims;
    int previous = 0;
    for (int axis : *op.axes()) {
      if (axis <= previous || axis >= rank) v.fail("axis " + std::to_string(axis) + " is not increasing within 1.." + std::to_string(rank - 1));
      dims[static_cast<size_t>(axis)] = 1;
      previous = axis;
    }
    const TensorDesc& y = v.define_output(op.output(), dims);
    v.expect_float(y);
    if (y.layout != x.layout) v.fail("layout changes");
  }
  void describe(const Model::Impl&, const schema::Op& o, OpInfo& info) const override {
    const auto& op = *o.kind_as_Reduce();
    auto attrs = text_stream();
    attrs << schema::EnumNameReduceOperation(op.operation()) << " axes";
    for (int axis : *op.axes()) attrs << " " << axis;
    info.attributes = attrs.str();
  }
  std::vector<ParameterSlot> parameters(const schema::Op&) const override { return {}; }
  std::unique_ptr<OpKernel> create_cpu_kernel(const KernelArgs& a) const override { return std::make_unique<ReduceKernel>(a, *a.op.kind_as_Reduce()); }
};

}  // namespace

template <>
const OpDef& op_definition<schema::OpKind_Reduce>() {
  static const ReduceDef def;
  return def;
}

}  // namespace edgegan
