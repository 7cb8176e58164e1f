// Binary on the GPU: y = a (+ - * /) b with the CPU's broadcasting; a constant operand
// (a weight buffer) is read from the kernel's upload.
#include "engine/backend/cuda/cuda_kernel.h"
#include "engine/ops/op_kernel_util.h"
#include "kernels_cuda/binary/binary.h"

namespace edgegan::cuda {
namespace {

static_assert(static_cast<int>(schema::BinaryOperation_Add) == static_cast<int>(kernels::BinaryOp::kAdd) &&
                  static_cast<int>(schema::BinaryOperation_Sub) == static_cast<int>(kernels::BinaryOp::kSub) &&
                  static_cast<int>(schema::BinaryOperation_Mul) == static_cast<int>(kernels::BinaryOp::kMul) &&
                  static_cast<int>(schema::BinaryOperation_Div) == static_cast<int>(kernels::BinaryOp::kDiv),
              "schema::BinaryOperation and kernels::BinaryOp number the operations alike");

class BinaryCuda final : public OpKernel {
 public:
  BinaryCuda(const KernelArgs& args, const schema::Binary& op)
      : upload_(args), a_(op.a()), b_(op.b()), output_(op.output()), op_(static_cast<kernels::BinaryOp>(op.operation())) {
    const BinaryLayout layout = binary_layout(args, op);
    shape_ = layout.shape;
    in_place_ = layout.in_place;
    if (a_ < 0 || b_ < 0) constant_ = upload_.weights(op.constant());
    upload_.commit();
  }
  const char* kernel_name() const override { return "cuda_binary"; }
  bool works_in_place() const override { return in_place_ >= 0; }
  int in_place_input() const override { return in_place_; }
  uint64_t repacked_weight_bytes() const override { return upload_.device_bytes(); }
  void run(const RunContext& ctx) override { binary(shape_, op_, operand(ctx, a_), operand(ctx, b_), ctx.f32(output_), stream_of(ctx)); }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  const float* operand(const RunContext& ctx, int tensor) const { return tensor >= 0 ? ctx.f32(tensor) : upload_.as<float>(constant_); }

  KernelUpload upload_;
  int a_, b_, output_;
  kernels::BinaryOp op_;
  kernels::BinaryShape shape_;
  int constant_ = -1;
  int in_place_ = -1;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Binary>(const KernelArgs& a) {
  return std::make_unique<BinaryCuda>(a, *a.op.kind_as_Binary());
}

}  // namespace edgegan::cuda
