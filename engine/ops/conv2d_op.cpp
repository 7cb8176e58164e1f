#include "engine/ops/op_kernel.h"
#include "kernels_cpu/conv2d/conv2d_trimmed.h"
#include "kernels_cpu/common/conv_geometry.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"  // saturating_product

namespace edgegan {
namespace {

class Conv2DKernel final : public OpKernel {
 public:
  Conv2DKernel(const Model::Impl& m, const schema::Conv2D& op, int64_t batch)
      : input_(op.input()), output_(op.output()), weights_(m.f32(op.weights())), epilogue_(make_epilogue(m, op.epilogue())) {
    shape_ = conv_shape_of(m, op, batch);
  }
  const char* kernel_name() const override { return "conv2d_trimmed"; }
  uint64_t macs() const override {  // trimmed: only taps that read inside the input
    return static_cast<uint64_t>(cpu::saturating_product({shape_.batch, shape_.in_channels, shape_.out_channels,
                                                          static_cast<int64_t>(cpu::conv_useful_pairs(shape_.h)),
                                                          static_cast<int64_t>(cpu::conv_useful_pairs(shape_.w))}));
  }
  void run(const RunContext& ctx) override {
    cpu::conv2d_trimmed(shape_, weights_, ctx.f32(input_), ctx.f32(output_), epilogue_, ctx.threads);
  }

 private:
  int input_, output_;
  const float* weights_;
  cpu::Epilogue epilogue_;
  cpu::ConvShape shape_;
};

}  // namespace

std::unique_ptr<OpKernel> make_conv2d(const Model::Impl& m, const schema::Conv2D& op, int64_t batch) {
  return std::make_unique<Conv2DKernel>(m, op, batch);
}

}  // namespace edgegan
