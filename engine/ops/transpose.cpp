// Transpose: a permutation of a run-time tensor's storage axes (the batch stays first); no weights.
#include "engine/ops/op_def.h"
#include "engine/ops/op_kernel_util.h"
#include "engine/ops/op_text.h"
#include "engine/ops/op_validator.h"
#include "kernels_cpu/transpose/transpose.h"

namespace edgegan {
namespace {

class TransposeKernel final : public OpKernel {
 public:
  TransposeKernel(const KernelArgs& a, const schema::Transpose& op) : input_(op.input()), output_(op.output()), shape_(transpose_shape(a, op)) {}
  const char* kernel_name() const override { return "transpose"; }
  void run(const RunContext& ctx) override { cpu::transpose(shape_, ctx.f32(input_), ctx.f32(output_), ctx.threads); }
  void backward(const BackwardContext& b) override {
    if (!b.wants(0)) return;
    cpu::transpose_backward(shape_, b.grad(output_), b.grad(input_), b.accumulates(0), b.ctx.threads);
  }

 private:
  int input_, output_;
  cpu::TransposeShape shape_;
};

class TransposeDef final : public OpDef {
 public:
  const char* name() const override { return "Transpose"; }
  std::vector<int> inputs(const schema::Op& op) const override { return {op.kind_as_Transpose()->input()}; }
  int output(const schema::Op& op) const override { return op.kind_as_Transpose()->output(); }
  void validate(const schema::Op& o, OpValidator& v) const override {
    const auto& op = *o.kind_as_Transpose();
    const TensorDesc& x = v.use(op.input(), "input");
    v.expect_float(x);
    const size_t rank = x.dims.size();
    if (rank > static_cast<size_t>(cpu::kTransposeMaxRank)) v.fail("rank " + std::to_string(rank) + " is above " + std::to_string(cpu::kTransposeMaxRank));
    if (!op.perm() || op.perm()->size() != rank) v.fail("perm does not have the input's rank");
    std::vector<int64_t> dims(rank);
    std::vector<bool> seen(rank, false);
    for (size_t k = 0; k < rank; ++k) {
      const int p = op.perm()->Get(static_cast<uint32_t>(k));
      if (p < 0 || static_cast<size_t>(p) >= rank || seen[static_cast<size_t>(p)]) v.fail("perm is not a permutation");
      if ((k == 0) != (p == 0)) v.fail("perm moves the batch");
      seen[static_cast<size_t>(p)] = true;
      dims[k] = x.dims[static_cast<size_t>(p)];
    }
    const TensorDesc& y = v.define_output(op.output(), dims);
    v.expect_float(y);
  }
  void describe(const Model::Impl&, const schema::Op& o, OpInfo& info) const override {
    auto attrs = text_stream();
    attrs << "perm";
    for (int p : *o.kind_as_Transpose()->perm()) attrs << " " << p;
    info.attributes = attrs.str();
  }
  std::vector<ParameterSlot> parameters(const schema::Op&) const override { return {}; }
  std::unique_ptr<OpKernel> create_cpu_kernel(const KernelArgs& a) const override { return std::make_unique<TransposeKernel>(a, *a.op.kind_as_Transpose()); }
};

}  // namespace

template <>
const OpDef& op_definition<schema::OpKind_Transpose>() {
  static const TransposeDef def;
  return def;
}

}  // namespace edgegan
