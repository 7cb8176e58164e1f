// Binary: y = a (+ - * /) b with ONNX broadcasting over storage dimensions; one operand
// may be a constant weight buffer (not trainable).
#include <algorithm>

#include "engine/ops/half_route.h"
#include "engine/ops/op_def.h"
#include "engine/ops/op_kernel_util.h"
#include "engine/ops/op_text.h"
#include "engine/ops/op_validator.h"
#include "kernels_cpu/binary/binary.h"

namespace edgegan {
namespace {

const char* operation_name(schema::BinaryOperation o) {
  switch (o) {
    case schema::BinaryOperation_Add: return "add";
    case schema::BinaryOperation_Sub: return "sub";
    case schema::BinaryOperation_Mul: return "mul";
    case schema::BinaryOperation_Div: return "div";
  }
  return "?";
}

class BinaryKernel final : public OpKernel {
 public:
  BinaryKernel(const OpDef& def, const KernelArgs& args, const schema::Binary& op)
      : a_(op.a()), b_(op.b()), output_(op.output()), op_(static_cast<cpu::BinaryOp>(op.operation())), constant_(a_ < 0 || b_ < 0 ? args.weights.f32(op.constant()) : nullptr),
        halves_(half_storage(args)), overflow_(def, args.op) {
    const BinaryLayout layout = binary_layout(args, op);
    shape_ = layout.shape;
    in_place_ = layout.in_place;
  }
  const char* kernel_name() const override { return halves_ ? "binary_f16" : "binary"; }
  bool works_in_place() const override { return in_place_ >= 0; }
  int in_place_input() const override { return in_place_; }
  bool stores_halves() const override { return halves_; }
  void run(const RunContext& ctx) override {
    if (!halves_) return cpu::binary(shape_, op_, operand(ctx, a_), operand(ctx, b_), ctx.f32(output_), ctx.threads);
    overflow_.clear();
    overflow_.add(cpu::binary_halves(shape_, op_, half_operand(ctx, a_), half_operand(ctx, b_), reinterpret_cast<uint16_t*>((*ctx.tensors)[static_cast<size_t>(output_)]),
                                     ctx.threads));
  }
  void check_run() override { overflow_.check(); }
  void backward(const BackwardContext& b) override {
    const float* g = b.grad(output_);
    const float* va = operand(b.ctx, a_);
    const float* vb = operand(b.ctx, b_);
    size_t k = 0;  // the run-time inputs, in inputs() order
    for (int which : {0, 1}) {
      const int tensor = which == 0 ? a_ : b_;
      if (tensor < 0) continue;
      if (b.wants(k)) cpu::binary_backward(shape_, op_, which, va, vb, g, b.grad(tensor), b.accumulates(k), b.ctx.threads);
      ++k;
    }
  }

 private:
  const float* operand(const RunContext& ctx, int tensor) const { return tensor >= 0 ? ctx.f32(tensor) : constant_; }
  // fp16: a tensor is the arena's halves, the constant stays floats.
  cpu::BinaryOperand half_operand(const RunContext& ctx, int tensor) const {
    return tensor >= 0 ? cpu::BinaryOperand{(*ctx.tensors)[static_cast<size_t>(tensor)], true} : cpu::BinaryOperand{constant_, false};
  }

  int a_, b_, output_;
  cpu::BinaryOp op_;
  const float* constant_;
  cpu::BinaryShape shape_;
  int in_place_ = -1;
  bool halves_;  // an fp16 session's native route
  HalfOverflow overflow_;
};

class BinaryDef final : public OpDef {
 public:
  const char* name() const override { return "Binary"; }
  std::vector<int> inputs(const schema::Op& o) const override {
    const auto& op = *o.kind_as_Binary();
    std::vector<int> in;
    if (op.a() >= 0) in.push_back(op.a());
    if (op.b() >= 0) in.push_back(op.b());
    return in;
  }
  int output(const schema::Op& op) const override { return op.kind_as_Binary()->output(); }
  void validate(const schema::Op& o, OpValidator& v) const override {
    const auto& op = *o.kind_as_Binary();
    if (op.operation() < schema::BinaryOperation_MIN || op.operation() > schema::BinaryOperation_MAX) v.fail("unknown operation");
    if (op.a() < 0 && op.b() < 0) v.fail("both operands are the constant");
    if (op.a() < -1 || op.b() < -1) v.fail("operand index below -1");
    const TensorDesc* a = op.a() >= 0 ? &v.use(op.a(), "a") : nullptr;
    const TensorDesc* b = op.b() >= 0 ? &v.use(op.b(), "b") : nullptr;
    const TensorDesc& first = a ? *a : *b;
    const size_t rank = first.dims.size();
    if (rank < 1 || rank > static_cast<size_t>(cpu::kBinaryMaxRank)) v.fail("rank " + std::to_string(rank) + " is not 1.." + std::to_string(cpu::kBinaryMaxRank));
    // The output's shape is the operands' (and the constant's) broadcast.
    std::vector<int64_t> want(rank, 1);
    want[0] = -1;
    for (const TensorDesc* t : {a, b}) {
      if (!t) continue;
      v.expect_float(*t);
      if (t->dims.size() != rank) v.fail("operand '" + t->name + "' " + dims_text(t->dims) + " does not have the other's rank");
      if (t->layout != first.layout) v.fail("operand '" + t->name + "' has another layout than the other");
      for (size_t k = 1; k < rank; ++k) want[k] = std::max(want[k], t->dims[k]);
    }
    const bool has_constant = !a || !b;
    int64_t constant_elements = 0;
    if (!has_constant) {
      if (op.constant() != 0 || op.constant_dims()) v.fail("a constant is given but both operands are tensors");
    } else {
      const auto* cd = op.constant_dims();
      if (!cd || cd->size() != rank) v.fail("constant_dims does not have the operand's rank");
      if (cd->Get(0) != 1) v.fail("the constant's first dimension is not 1");
      constant_elements = 1;
      for (size_t k = 1; k < rank; ++k) {
        const int64_t d = cd->Get(static_cast<uint32_t>(k));
        if (d < 1 || d > kMaxDim) v.fail("constant_dims " + std::to_string(d) + " is out of range");
        want[k] = std::max(want[k], d);
        constant_elements = v.checked_mul(constant_elements, d);
      }
      for (size_t k = 1; k < rank; ++k) {
        const int64_t d = cd->Get(static_cast<uint32_t>(k));
        if (d != want[k] && d != 1) v.fail("constant_dims " + std::to_string(d) + " does not broadcast to " + dims_text(want));
      }
    }
    for (const TensorDesc* t : {a, b})
      for (size_t k = 1; t && k < rank; ++k)
        if (t->dims[k] != want[k] && t->dims[k] != 1)
          v.fail("operand '" + t->name + "' " + dims_text(t->dims) + " does not broadcast to " + dims_text(want));
    TensorDesc& y = v.define_output(op.output(), want);
    v.expect_float(y);
    if (y.layout != first.layout) v.fail("the output has another layout than the operands");
    if (has_constant) v.expect_buffer(op.constant(), static_cast<uint64_t>(constant_elements), "constant", false);
  }
  void describe(const Model::Impl& m, const schema::Op& o, OpInfo& info) const override {
    const auto& op = *o.kind_as_Binary();
    auto attrs = text_stream();
    attrs << operation_name(op.operation());
    if (op.a() < 0 || op.b() < 0) {
      std::vector<int64_t> dims;
      if (op.constant_dims())
        for (int64_t d : *op.constant_dims()) dims.push_back(d);
      attrs << " constant " << (op.a() < 0 ? "a " : "b ") << dims_text(dims);
    }
    info.attributes = attrs.str();
    info.weight_bytes = m.buffer_bytes(op.constant());
  }
  std::vector<ParameterSlot> parameters(const schema::Op&) const override { return {}; }
  std::unique_ptr<OpKernel> create_cpu_kernel(const KernelArgs& a) const override {
    return std::make_unique<BinaryKernel>(*this, a, *a.op.kind_as_Binary());
  }
};

}  // namespace

template <>
const OpDef& op_definition<schema::OpKind_Binary>() {
  static const BinaryDef def;
  return def;
}

}  // namespace edgegan
