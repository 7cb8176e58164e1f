// Embedding on the GPU: a gather of table rows. Labels come from users, so the device
// records the first index outside the table and check_run() reports it as the CPU
// kernel does.
#include "engine/backend/cuda/cuda_kernel.h"
#include "kernels_cuda/embedding/embedding.h"

namespace edgegan::cuda {
namespace {

class EmbeddingCuda final : public OpKernel {
 public:
  EmbeddingCuda(const KernelArgs& a, const schema::Embedding& op)
      : upload_(a), indices_(op.indices()), output_(op.output()), rows_(op.num_embeddings()), dim_(op.dim()),
        count_(a.batch * a.tensor(op.indices()).per_sample), indices_name_(a.tensor(op.indices()).name), name_(a.op.name() ? a.op.name()->str() : "") {
    table_ = upload_.weights(op.table());
    const IndexError none{-1, 0};
    error_ = upload_.bytes(&none, sizeof none);
    upload_.commit();
  }
  const char* kernel_name() const override { return "cuda_embedding_lookup"; }
  uint64_t repacked_weight_bytes() const override { return upload_.device_bytes(); }
  uint64_t weight_bytes_read(uint64_t) const override { return static_cast<uint64_t>(count_ * dim_) * 4; }
  void run(const RunContext& ctx) override {
    embedding_lookup(count_, reinterpret_cast<const long long*>(ctx.i64(indices_)), rows_, static_cast<int>(dim_), upload_.as<float>(table_),
                     ctx.f32(output_), const_cast<IndexError*>(upload_.as<IndexError>(error_)), stream_of(ctx));
  }
  void check_run() override {
    IndexError e{};
    check_cuda(cudaMemcpy(&e, upload_.at(error_), sizeof e, cudaMemcpyDeviceToHost), "read the embedding's index check");
    if (e.position >= 0)
      throw Error("input '" + indices_name_ + "': value " + std::to_string(e.value) + " at position " + std::to_string(e.position) +
                  " is outside 0.." + std::to_string(rows_ - 1) + " (embedding '" + name_ + "')");
  }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  KernelUpload upload_;
  int indices_, output_;
  int64_t rows_, dim_, count_;
  std::string indices_name_, name_;
  int table_ = -1, error_ = -1;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Embedding>(const KernelArgs& a) {
  return std::make_unique<EmbeddingCuda>(a, *a.op.kind_as_Embedding());
}

}  // namespace edgegan::cuda
