// Embedding on Vulkan: a gather of table rows. Labels come from users, so the shader
// records the lowest position whose index is outside the table and that index, and
// check_run() reports them as the CPU kernel does.
#include <cstring>

#include "engine/backend/vulkan/vulkan_kernel.h"

namespace edgegan::vulkan {
namespace {

constexpr int32_t kNoError = 0x7fffffff;

class EmbeddingVulkan final : public OpKernel {
 public:
  EmbeddingVulkan(const KernelArgs& a, Context& c, const schema::Embedding& op)
      : upload_(a, c, 7), context_(c), indices_(op.indices()), output_(op.output()), rows_(op.num_embeddings()), dim_(op.dim()),
        count_(a.batch * a.tensor(op.indices()).per_sample), indices_name_(a.tensor(op.indices()).name), name_(a.op.name() ? a.op.name()->str() : "") {
    upload_.set(0, static_cast<int32_t>(rows_));
    upload_.set(1, static_cast<int32_t>(dim_));
    upload_.set(2, 4);  // the error word
    upload_.set(3, upload_.weights(op.table()));
    upload_.set(4, kNoError);
    upload_.commit();
  }
  const char* kernel_name() const override { return "vulkan_embedding_lookup"; }
  uint64_t repacked_weight_bytes() const override { return upload_.device_bytes(); }
  uint64_t weight_bytes_read(uint64_t) const override { return static_cast<uint64_t>(count_ * dim_) * (upload_.half() ? 2 : 4); }
  void run(const RunContext& ctx) override {
    Stream& s = stream_of(ctx);
    s.fill(upload_.address() + 16, 4, static_cast<uint32_t>(kNoError));
    Push p;
    p.params = upload_.address();
    p.tensors[0] = address_of(ctx, indices_);
    p.tensors[1] = address_of(ctx, output_);
    s.dispatch("embedding", upload_.half(), p, static_cast<uint64_t>(count_ * dim_));
    p.first = 1;
    s.dispatch("embedding", upload_.half(), p, 1);
  }
  void check_run() override {
    int32_t record[3] = {kNoError, 0, 0};  // position, then the index's low and high words
    context_.read(record, upload_.address() + 16, sizeof record);
    const int32_t position = record[0];
    if (position == kNoError) return;
    int64_t value = 0;
    std::memcpy(&value, &record[1], 8);
    throw Error("input '" + indices_name_ + "': value " + std::to_string(value) + " at position " + std::to_string(position) +
                " is outside 0.." + std::to_string(rows_ - 1) + " (embedding '" + name_ + "')");
  }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  Upload upload_;
  Context& context_;
  int indices_, output_;
  int64_t rows_, dim_, count_;
  std::string indices_name_, name_;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Embedding>(const KernelArgs& a, Context& c) {
  return std::make_unique<EmbeddingVulkan>(a, c, *a.op.kind_as_Embedding());
}

}  // namespace edgegan::vulkan
