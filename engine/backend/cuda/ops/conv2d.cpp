// Conv2D on the GPU. Ungrouped: one implicit-GEMM task over the [kh][kw][Cin][Cout]
// weights, bias, activation and a fused residual in the epilogue; with a fused input
// map (a nearest Resize and/or a reflect/edge/wrap Pad folded in) the map is first
// gathered into the workspace through per-axis index tables, then the same GEMM runs
// over it. Grouped and depthwise, and ungrouped ones of 1-4 input channels (where the
// GEMM's channel slices would be mostly padding): direct kernels (kernels_cuda/conv2d)
// reading the file's [kh][kw][Cin/groups][Cout] weights and the input directly or
// through the tables. Conv2D weights are float32 (the validator allows fp16 for transposed
// convolutions only).
#include <vector>

#include "engine/backend/cuda/cuda_kernel.h"
#include "engine/ops/op_kernel_util.h"
#include "kernels_common/conv_input_map_table.h"
#include "kernels_cuda/conv2d/conv2d.h"
#ifdef EDGEGAN_WITH_CUDNN
#include "engine/backend/cuda/cudnn/cudnn_conv_kernel.h"
#endif

namespace edgegan::cuda {
namespace {


ConvGemmShape gemm_shape(const kernels::ConvShape& s) {
  return conv2d_gemm_shape(static_cast<int>(s.batch), static_cast<int>(s.h.in), static_cast<int>(s.w.in), static_cast<int>(s.in_channels),
                           static_cast<int>(s.h.out), static_cast<int>(s.w.out), static_cast<int>(s.out_channels), static_cast<int>(s.h.kernel),
                           static_cast<int>(s.w.kernel), static_cast<int>(s.h.stride), static_cast<int>(s.w.stride), static_cast<int>(s.h.dilation),
                           static_cast<int>(s.w.dilation), static_cast<int>(s.h.pad_begin), static_cast<int>(s.w.pad_begin));
}

// The map's index tables for this input's size, queued on `upload` (rows, then cols);
// `rows`/`cols` hold them until it commits.
void queue_map_tables(const KernelArgs& a, const schema::Conv2D& op, const kernels::ConvShape& s, KernelUpload& upload, std::vector<int32_t>& rows,
                      std::vector<int32_t>& cols, int& rows_slot, int& cols_slot) {
  const TensorDesc& x = a.tensor(op.input());
  const auto mode = static_cast<kernels::PadMode>(op.input_pad_mode());
  rows.resize(static_cast<size_t>(s.h.in));
  cols.resize(static_cast<size_t>(s.w.in));
  kernels::conv_input_map_table(x.dims[1], map_axis_h(op), mode, rows.data());
  kernels::conv_input_map_table(x.dims[2], map_axis_w(op), mode, cols.data());
  rows_slot = upload.bytes(rows.data(), rows.size() * sizeof(int32_t));
  cols_slot = upload.bytes(cols.data(), cols.size() * sizeof(int32_t));
}

class Conv2DCuda final : public GemmOpKernel {
 public:
  Conv2DCuda(const KernelArgs& a, const schema::Conv2D& op)
      : GemmOpKernel(a, op.input(), op.output(), op.weights(), op.epilogue(), gemm_shape(a.conv_shape(op)), op.residual()), macs_(conv2d_macs(a.conv_shape(op))) {}
  const char* kernel_name() const override { return "cuda_conv2d_implicit_gemm"; }
  uint64_t macs() const override { return macs_; }

 private:
  uint64_t macs_;
};

// Ungrouped through a fused input map: the map gathered into the head of the workspace
// (the GEMM's own scratch after it), then the GEMM over it.
class MappedConv2DCuda final : public GemmOpKernel {
 public:
  MappedConv2DCuda(const KernelArgs& a, const schema::Conv2D& op, const kernels::ConvShape& s)
      : GemmOpKernel(a, op.input(), op.output(), op.weights(), op.epilogue(), gemm_shape(s), op.residual()), tables_(a), shape_(s),
        macs_(conv2d_macs(s)) {
    std::vector<int32_t> rows, cols;
    queue_map_tables(a, op, s, tables_, rows, cols, rows_, cols_);
    tables_.commit();
    const TensorDesc& x = a.tensor(op.input());
    src_h_ = static_cast<int>(x.dims[1]), src_w_ = static_cast<int>(x.dims[2]);
    map_bytes_ = (static_cast<uint64_t>(s.batch * s.h.in * s.w.in * s.in_channels) * 4 + 255) / 256 * 256;
  }
  const char* kernel_name() const override { return "cuda_conv2d_input_map_gather_implicit_gemm"; }
  uint64_t macs() const override { return macs_; }
  uint64_t workspace_bytes() const override { return map_bytes_ + GemmOpKernel::workspace_bytes(); }
  uint64_t repacked_weight_bytes() const override { return GemmOpKernel::repacked_weight_bytes() + tables_.device_bytes(); }
  void run(const RunContext& ctx) override {
    float* mapped = reinterpret_cast<float*>(ctx.workspace);
    const DeviceInputMap map{tables_.as<int>(rows_), tables_.as<int>(cols_), src_h_, src_w_};
    conv2d_input_map_gather(static_cast<int>(shape_.batch), static_cast<int>(shape_.h.in), static_cast<int>(shape_.w.in),
                            static_cast<int>(shape_.in_channels), map, ctx.f32(input()), mapped, stream_of(ctx));
    RunContext gemm_ctx = ctx;
    gemm_ctx.workspace = ctx.workspace + map_bytes_;
    run_gemm(gemm_ctx, mapped);
  }

 private:
  KernelUpload tables_;
  kernels::ConvShape shape_;
  uint64_t macs_;
  int rows_ = -1, cols_ = -1, src_h_ = 0, src_w_ = 0;
  uint64_t map_bytes_ = 0;
};

// Grouped or depthwise, or of 1-4 input channels, with or without a fused input map:
// the direct kernels.
class DirectConv2DCuda final : public OpKernel {
 public:
  DirectConv2DCuda(const KernelArgs& a, const schema::Conv2D& op, const kernels::ConvShape& s)
      : upload_(a), input_(op.input()), output_(op.output()), residual_(op.residual()), shape_(s), groups_(op.groups()),
        depthwise_(op.groups() == op.in_channels()), activation_(activation_params(op.epilogue())) {
    weights_ = upload_.weights(op.weights());
    bias_ = upload_.weights(op.epilogue() ? op.epilogue()->bias() : 0);
    prelu_ = FusedPRelu(a, upload_, op.epilogue(), op.output());
    std::vector<int32_t> rows, cols;
    if (has_input_map(op)) {
      queue_map_tables(a, op, s, upload_, rows, cols, rows_, cols_);
      const TensorDesc& x = a.tensor(op.input());
      src_h_ = static_cast<int>(x.dims[1]), src_w_ = static_cast<int>(x.dims[2]);
    }
    upload_.commit();
  }
  const char* kernel_name() const override {
    if (groups_ == 1) return rows_ >= 0 ? "cuda_conv2d_few_channels_direct_input_map" : "cuda_conv2d_few_channels_direct";
    if (rows_ >= 0) return depthwise_ ? "cuda_conv2d_depthwise_direct_input_map" : "cuda_conv2d_grouped_direct_input_map";
    return depthwise_ ? "cuda_conv2d_depthwise_direct" : "cuda_conv2d_grouped_direct";
  }
  uint64_t macs() const override { return conv2d_macs(shape_) / static_cast<uint64_t>(groups_); }
  uint64_t repacked_weight_bytes() const override { return upload_.device_bytes(); }
  void run(const RunContext& ctx) override {
    const DeviceInputMap map{upload_.as<int>(rows_), upload_.as<int>(cols_), src_h_, src_w_};
    conv2d_direct(shape_, groups_, map, ctx.f32(input_), upload_.as<float>(weights_), upload_.as<float>(bias_), activation_,
                  residual_ >= 0 ? ctx.f32(residual_) : nullptr, ctx.f32(output_), stream_of(ctx));
    prelu_.run(ctx, upload_);
  }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  KernelUpload upload_;
  int input_, output_, residual_;
  kernels::ConvShape shape_;
  int groups_;
  bool depthwise_;
  ActivationParams activation_;
  FusedPRelu prelu_;
  int weights_ = -1, bias_ = -1, rows_ = -1, cols_ = -1, src_h_ = 0, src_w_ = 0;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_Conv2D>(const KernelArgs& a) {
  const auto& op = *a.op.kind_as_Conv2D();
  const kernels::ConvShape s = conv2d_shape(a, op);
  if (op.groups() != 1 || conv2d_few_channels(s, 1)) return std::make_unique<DirectConv2DCuda>(a, op, s);
  if (has_input_map(op)) return std::make_unique<MappedConv2DCuda>(a, op, s);
  std::unique_ptr<OpKernel> own = std::make_unique<Conv2DCuda>(a, op);
#ifdef EDGEGAN_WITH_CUDNN
  return cudnn::choose_conv_tactic(a, std::move(own));  // cuDNN's graph where it measures faster
#else
  return own;
#endif
}

}  // namespace edgegan::cuda
