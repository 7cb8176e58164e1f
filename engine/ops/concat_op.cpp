#include "engine/ops/op_kernel.h"
#include "kernels_cpu/concat/concat.h"

namespace edgegan {

ConcatLayout concat_layout(const Model::Impl& m, const schema::Concat& op, int64_t batch) {
  const TensorDesc& y = m.tensors[static_cast<size_t>(op.output())];
  const size_t axis = static_cast<size_t>(op.axis());
  ConcatLayout l;
  l.outer = batch;
  for (size_t k = 1; k < axis; ++k) l.outer *= y.dims[k];
  int64_t inner = 1;
  for (size_t k = axis + 1; k < y.dims.size(); ++k) inner *= y.dims[k];
  for (int index : *op.inputs()) l.chunks.push_back(m.tensors[static_cast<size_t>(index)].dims[axis] * inner);
  return l;
}

namespace {

class ConcatKernel final : public OpKernel {
 public:
  ConcatKernel(const Model::Impl& m, const schema::Concat& op, int64_t batch)
      : output_(op.output()), inputs_(op.inputs()->begin(), op.inputs()->end()), layout_(concat_layout(m, op, batch)) {}
  const char* kernel_name() const override { return "concat"; }
  void run(const RunContext& ctx) override {
    std::vector<const float*> src;
    for (int i : inputs_) src.push_back(ctx.f32(i));
    cpu::concat(layout_.outer, src, layout_.chunks, ctx.f32(output_));
  }

 private:
  int output_;
  std::vector<int> inputs_;
  ConcatLayout layout_;
};

}  // namespace

std::unique_ptr<OpKernel> make_concat(const Model::Impl& m, const schema::Concat& op, int64_t batch) {
  return std::make_unique<ConcatKernel>(m, op, batch);
}

}  // namespace edgegan
