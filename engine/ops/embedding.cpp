// Embedding: y[N, dim] = table[indices[N]], a conditional GAN's label lookup.
#include "engine/ops/op_def.h"
#include "engine/ops/op_kernel_util.h"
#include "engine/ops/op_validator.h"
#include "kernels_cpu/embedding/embedding.h"

namespace edgegan {
namespace {

class EmbeddingKernel final : public OpKernel {
 public:
  EmbeddingKernel(const KernelArgs& a, const schema::Embedding& op)
      : indices_(op.indices()), output_(op.output()), rows_(op.num_embeddings()), dim_(op.dim()),
        count_(a.batch * a.tensor(op.indices()).per_sample), table_(a.weights.f32(op.table())), indices_name_(a.tensor(op.indices()).name),
        name_(a.op.name() ? a.op.name()->str() : "") {}
  const char* kernel_name() const override { return "embedding_lookup"; }
  uint64_t weight_bytes_read(uint64_t) const override { return static_cast<uint64_t>(count_ * dim_) * 4; }  // the rows it gathers
  void run(const RunContext& ctx) override {
    const int64_t* idx = ctx.i64(indices_);
    // Labels come from users: check every one before reading the table.
    for (int64_t k = 0; k < count_; ++k)
      if (idx[k] < 0 || idx[k] >= rows_)
        throw Error("input '" + indices_name_ + "': value " + std::to_string(idx[k]) + " at position " + std::to_string(k) + " is outside 0.." +
                    std::to_string(rows_ - 1) + " (embedding '" + name_ + "')");
    cpu::embedding_lookup(count_, idx, dim_, table_, ctx.f32(output_));
  }
  uint64_t backward_workspace_bytes() const override { return static_cast<uint64_t>(rows_ * dim_) * 4; }
  void backward(const BackwardContext& b) override {
    if (!b.wants_parameters()) return;  // its input is a label: nothing flows further
    float* dtable = reinterpret_cast<float*>(b.ctx.workspace);
    cpu::embedding_backward(count_, b.ctx.i64(indices_), rows_, dim_, b.grad(output_), dtable);
    add_into(b.parameter_gradient(0), dtable, rows_ * dim_);
  }

 private:
  int indices_, output_;
  int64_t rows_, dim_, count_;
  const float* table_;
  std::string indices_name_, name_;
};

class EmbeddingDef final : public OpDef {
 public:
  const char* name() const override { return "Embedding"; }
  std::vector<int> inputs(const schema::Op& op) const override { return {op.kind_as_Embedding()->indices()}; }
  int output(const schema::Op& op) const override { return op.kind_as_Embedding()->output(); }
  void validate(const schema::Op& o, OpValidator& v) const override {
    const auto& op = *o.kind_as_Embedding();
    const TensorDesc& idx = v.use(op.indices(), "indices");
    if (idx.dtype != DType::kInt64) v.fail("indices '" + idx.name + "' must be int64");
    v.check_range(op.num_embeddings(), 1, kMaxDim, "num_embeddings");
    v.check_range(op.dim(), 1, kMaxDim, "dim");
    TensorDesc& y = v.define(op.output());
    v.expect_float(y);
    if (y.per_sample != v.checked_mul(idx.per_sample, op.dim())) v.fail("output '" + y.name + "' must hold indices × dim values per sample");
    v.expect_buffer(op.table(), static_cast<uint64_t>(op.num_embeddings()) * op.dim(), "table", false);
  }
  void describe(const Model::Impl& m, const schema::Op& o, OpInfo& info) const override {
    const auto& e = *o.kind_as_Embedding();
    info.attributes = std::to_string(e.num_embeddings()) + " rows x " + std::to_string(e.dim());
    info.weight_bytes = m.buffer_bytes(e.table());
  }
  std::vector<ParameterSlot> parameters(const schema::Op& o) const override { return {{"table", o.kind_as_Embedding()->table()}}; }
  std::unique_ptr<OpKernel> create_cpu_kernel(const KernelArgs& a) const override {
    return std::make_unique<EmbeddingKernel>(a, *a.op.kind_as_Embedding());
  }
};

}  // namespace

template <>
const OpDef& op_definition<schema::OpKind_Embedding>() {
  static const EmbeddingDef def;
  return def;
}

}  // namespace edgegan
