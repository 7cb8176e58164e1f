#include "engine/ops/op_kernel.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"  // saturating_product
#include "kernels_cpu/dense/dense.h"
#include "kernels_cpu/common/conv_geometry.h"

namespace edgegan {
namespace {

class DenseKernel final : public OpKernel {
 public:
  DenseKernel(const Model::Impl& m, const schema::Dense& op, int64_t batch)
      : input_(op.input()), output_(op.output()), batch_(batch), in_(op.in_features()), out_(op.out_features()),
        weights_(m.f32(op.weights())), epilogue_(make_epilogue(m, op.epilogue())) {}
  const char* kernel_name() const override { return "dense"; }
  uint64_t macs() const override { return static_cast<uint64_t>(cpu::saturating_product({batch_, in_, out_})); }
  void run(const RunContext& ctx) override {
    cpu::dense(batch_, in_, out_, ctx.f32(input_), weights_, ctx.f32(output_), epilogue_, ctx.threads);
  }

 private:
  int input_, output_;
  int64_t batch_, in_, out_;
  const float* weights_;
  cpu::Epilogue epilogue_;
};

}  // namespace

std::unique_ptr<OpKernel> make_dense(const Model::Impl& m, const schema::Dense& op, int64_t batch) {
  return std::make_unique<DenseKernel>(m, op, batch);
}

}  // namespace edgegan
