#include "engine/ops/op_kernel.h"
#include "kernels_cpu/elementwise/elementwise.h"

namespace edgegan {
namespace {

class ElementwiseKernel final : public OpKernel {
 public:
  ElementwiseKernel(const Model::Impl& m, const schema::Elementwise& op, int64_t batch)
      : input_(op.input()), output_(op.output()), count_(batch * m.tensors[static_cast<size_t>(op.input())].per_sample),
        activation_(to_cpu(op.activation())), alpha_(op.alpha()) {}
  const char* kernel_name() const override { return "elementwise_activation"; }
  bool works_in_place() const override { return true; }
  int in_place_input() const override { return input_; }
  void run(const RunContext& ctx) override {
    cpu::elementwise_activation(count_, ctx.f32(input_), ctx.f32(output_), activation_, alpha_);
  }

 private:
  int input_, output_;
  int64_t count_;
  cpu::Activation activation_;
  float alpha_;
};

}  // namespace

std::unique_ptr<OpKernel> make_elementwise(const Model::Impl& m, const schema::Elementwise& op, int64_t batch) {
  return std::make_unique<ElementwiseKernel>(m, op, batch);
}

}  // namespace edgegan
