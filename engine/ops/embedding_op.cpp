#include "engine/ops/op_kernel.h"
#include "kernels_cpu/embedding/embedding.h"

namespace edgegan {
namespace {

class EmbeddingKernel final : public OpKernel {
 public:
  EmbeddingKernel(const Model::Impl& m, const schema::Embedding& op, int64_t batch, std::string name)
      : indices_(op.indices()), output_(op.output()), rows_(op.num_embeddings()), dim_(op.dim()),
        count_(batch * m.tensors[static_cast<size_t>(op.indices())].per_sample), table_(m.f32(op.table())),
        indices_name_(m.tensors[static_cast<size_t>(op.indices())].name), name_(std::move(name)) {}
  const char* kernel_name() const override { return "embedding_lookup"; }
  void run(const RunContext& ctx) override {
    const int64_t* idx = ctx.i64(indices_);
    // Labels come from users: check every one before reading the table.
    for (int64_t k = 0; k < count_; ++k)
      if (idx[k] < 0 || idx[k] >= rows_)
        throw Error("input '" + indices_name_ + "': value " + std::to_string(idx[k]) + " at position " + std::to_string(k) +
                    " is outside 0.." + std::to_string(rows_ - 1) + " (embedding '" + name_ + "')");
    cpu::embedding_lookup(count_, idx, dim_, table_, ctx.f32(output_));
  }

 private:
  int indices_, output_;
  int64_t rows_, dim_, count_;
  const float* table_;
  std::string indices_name_, name_;
};

}  // namespace

std::unique_ptr<OpKernel> make_embedding(const Model::Impl& m, const schema::Embedding& op, int64_t batch, const std::string& name) {
  return std::make_unique<EmbeddingKernel>(m, op, batch, name);
}

}  // namespace edgegan
