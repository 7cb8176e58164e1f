#include "engine/ops/op_kernel.h"
#include "kernels_cpu/channel_affine/channel_affine.h"

namespace edgegan {
namespace {

class ChannelAffineKernel final : public OpKernel {
 public:
  ChannelAffineKernel(const Model::Impl& m, const schema::ChannelAffine& op, int64_t batch)
      : input_(op.input()), output_(op.output()), channels_(op.channels()), scale_(m.f32(op.scale())),
        shift_(m.f32(op.shift())), activation_(to_cpu(op.activation())), alpha_(op.alpha()) {
    const TensorDesc& x = m.tensors[static_cast<size_t>(op.input())];
    pixels_ = batch * x.per_sample / channels_;
    // Row-major rank-4 (NCHW) never occurs: rank-4 activations are always NHWC,
    // so channels are the innermost dimension for both rank 2 and rank 4.
  }
  const char* kernel_name() const override { return "channel_affine"; }
  bool works_in_place() const override { return true; }
  int in_place_input() const override { return input_; }
  void run(const RunContext& ctx) override {
    cpu::channel_affine(pixels_, channels_, scale_, shift_, ctx.f32(input_), ctx.f32(output_), activation_, alpha_);
  }

 private:
  int input_, output_;
  int64_t channels_, pixels_ = 0;
  const float* scale_;
  const float* shift_;
  cpu::Activation activation_;
  float alpha_;
};

}  // namespace

std::unique_ptr<OpKernel> make_channel_affine(const Model::Impl& m, const schema::ChannelAffine& op, int64_t batch) {
  return std::make_unique<ChannelAffineKernel>(m, op, batch);
}

}  // namespace edgegan
