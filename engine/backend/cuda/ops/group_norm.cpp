// GroupNorm on the GPU (InstanceNorm: groups == channels): deterministic statistics per
// (image, group) into the workspace, then scale, shift, activation and the optional
// residual in one element-wise pass; may run in place over its input.
#include "engine/backend/cuda/cuda_kernel.h"
#include "kernels_cuda/group_norm/group_norm.h"

namespace edgegan::cuda {
namespace {

class GroupNormCuda final : public OpKernel {
 public:
  GroupNormCuda(const KernelArgs& a, const schema::GroupNorm& op)
      : upload_(a), input_(op.input()), output_(op.output()), residual_(op.residual()), epsilon_(op.epsilon()),
        activation_(activation_params(op.activation(), op.alpha(), op.beta())) {
    if (a.batch > kGroupNormMaxBatch)
      throw KernelRefusal("its kernels take at most " + std::to_string(kGroupNormMaxBatch) + " samples per batch, not " + std::to_string(a.batch));
    const TensorDesc& x = a.tensor(op.input());
    geometry_.batch = static_cast<int>(a.batch);
    geometry_.pixels = x.dims[1] * x.dims[2];
    geometry_.channels = op.channels();
    geometry_.groups = op.groups();
    geometry_.chunks = group_norm_chunks(geometry_, multiprocessor_count());
    // Scale and shift are float32 (the validator allows no fp16 for them).
    scale_ = upload_.weights(op.scale());
    shift_ = upload_.weights(op.shift());
    upload_.commit();
  }
  const char* kernel_name() const override { return "cuda_group_norm"; }
  uint64_t workspace_bytes() const override { return static_cast<uint64_t>(group_norm_workspace_floats(geometry_)) * 4; }
  uint64_t repacked_weight_bytes() const override { return upload_.device_bytes(); }
  // In place over the input, never over the residual (the CPU's rule, kept alike).
  bool works_in_place() const override { return residual_ != input_; }
  int in_place_input() const override { return input_; }
  void run(const RunContext& ctx) override {
    group_norm(geometry_, ctx.f32(input_), upload_.as<float>(scale_), upload_.as<float>(shift_), epsilon_, ctx.f32(output_), activation_,
               residual_ >= 0 ? ctx.f32(residual_) : nullptr, reinterpret_cast<float*>(ctx.workspace), stream_of(ctx));
  }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  KernelUpload upload_;
  int input_, output_, residual_;
  GroupNormGeometry geometry_;
  float epsilon_;
  ActivationParams activation_;
  int scale_ = -1, shift_ = -1;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_GroupNorm>(const KernelArgs& a) {
  return std::make_unique<GroupNormCuda>(a, *a.op.kind_as_GroupNorm());
}

}  // namespace edgegan::cuda
