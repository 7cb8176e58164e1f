// MatMul: the batched matrix product of two run-time tensors of rank 3 to 5 (attention's
// q·kᵀ and attn·v), their batch dims broadcast; no weights.
#include "engine/ops/op_def.h"
#include "engine/ops/matmul_rank5.h"
#include "engine/ops/op_kernel_util.h"
#include "engine/ops/op_text.h"
#include "engine/ops/op_validator.h"
#include "kernels_cpu/matmul/matmul.h"

namespace edgegan {
namespace {

class MatMulKernel final : public OpKernel {
 public:
  MatMulKernel(const KernelArgs& args, const schema::MatMul& op) : a_(op.a()), b_(op.b()), output_(op.output()), shape_(matmul_shape_any_rank(args, op)) {}
  const char* kernel_name() const override { return "matmul"; }
  uint64_t macs() const override {
    return static_cast<uint64_t>(cpu::saturating_product({shape_.batch[0], shape_.batch[1], shape_.m, shape_.n, shape_.k}));
  }
  void run(const RunContext& ctx) override { cpu::matmul(shape_, ctx.f32(a_), ctx.f32(b_), ctx.f32(output_), ctx.threads); }
  void backward(const BackwardContext& b) override {
    // inputs() lists a then b, once each even when they are one tensor (x · x).
    const float *va = b.ctx.f32(a_), *vb = b.ctx.f32(b_), *g = b.grad(output_);
    if (a_ == b_) {
      if (!b.wants(0)) return;
      cpu::matmul_backward(shape_, 0, va, vb, g, b.grad(a_), b.accumulates(0), b.ctx.threads);
      cpu::matmul_backward(shape_, 1, va, vb, g, b.grad(a_), true, b.ctx.threads);
      return;
    }
    if (b.wants(0)) cpu::matmul_backward(shape_, 0, va, vb, g, b.grad(a_), b.accumulates(0), b.ctx.threads);
    if (b.wants(1)) cpu::matmul_backward(shape_, 1, va, vb, g, b.grad(b_), b.accumulates(1), b.ctx.threads);
  }

 private:
  int a_, b_, output_;
  cpu::MatMulShape shape_;
};

class MatMulDef final : public OpDef {
 public:
  const char* name() const override { return "MatMul"; }
  std::vector<int> inputs(const schema::Op& o) const override {
    const auto& op = *o.kind_as_MatMul();
    if (op.a() == op.b()) return {op.a()};
    return {op.a(), op.b()};
  }
  int output(const schema::Op& op) const override { return op.kind_as_MatMul()->output(); }
  void validate(const schema::Op& o, OpValidator& v) const override {
    const auto& op = *o.kind_as_MatMul();
    const TensorDesc& ta = v.use(op.a(), "a");
    const TensorDesc& tb = v.use(op.b(), "b");
    v.expect_float(ta);
    v.expect_float(tb);
    const size_t rank = ta.dims.size();
    if (rank < 3 || rank > 5) v.fail("operands of rank " + std::to_string(rank) + " (3 to 5 taken)");
    if (tb.dims.size() != rank) v.fail("the operands' ranks differ");
    const Layout layout = rank == 4 ? Layout::kNHWC : Layout::kRowMajor;
    if (ta.layout != layout || tb.layout != layout) v.fail(rank == 4 ? "rank-4 operands are not NHWC" : "operands are not row-major");
    const std::vector<int64_t> a = matmul_logical_dims(ta, -1), b = matmul_logical_dims(tb, -1);
    if (a[rank - 1] != b[rank - 2]) v.fail("inner dims differ: " + dims_text(a) + " · " + dims_text(b));
    std::vector<int64_t> y = a;
    y[rank - 1] = b[rank - 1];
    if (rank == 4) {
      if (a[1] != b[1] && a[1] != 1 && b[1] != 1) v.fail("batch dims do not broadcast: " + dims_text(a) + " · " + dims_text(b));
      y[1] = std::max(a[1], b[1]);
      y = {y[0], y[2], y[3], y[1]};  // stored NHWC
    }
    if (rank == 5) {  // dims 1 and 2 broadcast together (merged into one batch dim)
      const bool same = a[1] == b[1] && a[2] == b[2], a_one = a[1] == 1 && a[2] == 1, b_one = b[1] == 1 && b[2] == 1;
      if (!same && !a_one && !b_one) v.fail("batch dims 1 and 2 do not broadcast together: " + dims_text(a) + " · " + dims_text(b));
      y[1] = std::max(a[1], b[1]);
      y[2] = std::max(a[2], b[2]);
    }
    const TensorDesc& out = v.define_output(op.output(), y);
    v.expect_float(out);
    if (out.layout != layout) v.fail("the output has another layout than the operands");
  }
  void describe(const Model::Impl&, const schema::Op&, OpInfo& info) const override { info.attributes = ""; }
  std::vector<ParameterSlot> parameters(const schema::Op&) const override { return {}; }
  std::unique_ptr<OpKernel> create_cpu_kernel(const KernelArgs& a) const override { return std::make_unique<MatMulKernel>(a, *a.op.kind_as_MatMul()); }
};

}  // namespace

template <>
const OpDef& op_definition<schema::OpKind_MatMul>() {
  static const MatMulDef def;
  return def;
}

}  // namespace edgegan
