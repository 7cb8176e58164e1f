// ConvTranspose2D on the GPU. Split (the product): one implicit-GEMM task per phase
// over the file's sub-kernels as stored, each phase writing its strided outputs. A
// layer whose input is a 1x1 map (a generator's projection of the noise) has at most
// one tap per output: it runs as one dense GEMM, y[N][(oh, ow, co)] = x[N][ci] W'[ci][..],
// on W' built once here (its tap, or zero, per output), instead of 16 mostly empty taps.
// The zero-insertion and col2im baselines, for comparison, reassemble the full
// kernel once when the session is built. Grouped layers (groups > 1) run on one direct
// gather kernel whatever the algorithm, as the CPU runs them on its grouped split
// kernel: each group's whole kernel reassembled once from the file's phases (fp16
// sub-kernels widened to float on the host then), each output summing its taps.
#include "engine/backend/cuda/cuda_kernel.h"
#include "engine/ops/op_kernel_util.h"
#include "kernels_cuda/conv_transpose2d/conv_transpose2d.h"
#ifdef EDGEGAN_WITH_CUDNN
#include "engine/backend/cuda/cudnn/cudnn_conv_kernel.h"
#endif

namespace edgegan::cuda {
namespace {

// The file's phase sub-kernels as the CPU's assembly routines take them, fp16 phases
// widened into `widened` (which must outlive the result).
kernels::ConvTranspose2DSubKernels phase_weights(const KernelArgs& a, const schema::ConvTranspose2D& op, const kernels::ConvShape& shape,
                                          std::vector<std::vector<float>>& widened) {
  kernels::ConvTranspose2DSubKernels w;
  w.phases_h = kernels::split_conv_transpose_axis(shape.h);
  w.phases_w = kernels::split_conv_transpose_axis(shape.w);
  w.panel_columns = op.weight_panel_columns();
  widened.reserve(op.phases()->size());
  for (const auto* p : *op.phases()) {
    if (p->weights() && a.weights.is_f16(p->weights())) {
      widened.push_back(a.model.widened(p->weights()));
      w.sub_kernels.push_back(widened.back().data());
    } else {
      w.sub_kernels.push_back(a.weights.f32(p->weights()));
    }
  }
  return w;
}

class ConvTranspose2DCuda final : public OpKernel {
 public:
  ConvTranspose2DCuda(const KernelArgs& a, const schema::ConvTranspose2D& op)
      : upload_(a), algo_(a.conv_transpose2d_algo), input_(op.input()), output_(op.output()), shape_(a.conv_shape(op)) {
    const auto* ep = op.epilogue();
    activation_ = activation_params(ep);
    prelu_ = FusedPRelu(a, upload_, ep, op.output());
    const auto phases_h = kernels::split_conv_transpose_axis(shape_.h), phases_w = kernels::split_conv_transpose_axis(shape_.w);
    projection_ = algo_ == ConvTranspose2DAlgo::kSplit && shape_.h.in == 1 && shape_.w.in == 1;
    // (A projection uploads its bias expanded to every output position instead.)
    if (!projection_) bias_ = upload_.weights(ep ? ep->bias() : 0);
    if (projection_) {
      const auto full = full_kernel(a, op, kernels::FullKernelLayout::kChannelsFirst);  // [Cin][kh][kw][Cout]
      const int64_t out_h = shape_.h.out, out_w = shape_.w.out, cout = shape_.out_channels, row = out_h * out_w * cout;
      full_.assign(static_cast<size_t>(shape_.in_channels * row), 0.f);
      for (int64_t oh = 0; oh < out_h; ++oh)
        for (int64_t ow = 0; ow < out_w; ++ow) {
          // The one tap landing on (oh, ow) from input (0, 0), if any.
          const int64_t ah = oh + shape_.h.pad_begin, aw = ow + shape_.w.pad_begin;
          if (ah % shape_.h.dilation || aw % shape_.w.dilation) continue;
          const int64_t th = ah / shape_.h.dilation, tw = aw / shape_.w.dilation;
          if (ah < 0 || aw < 0 || th >= shape_.h.kernel || tw >= shape_.w.kernel) continue;
          for (int64_t ci = 0; ci < shape_.in_channels; ++ci)
            std::copy_n(full.begin() + ((ci * shape_.h.kernel + th) * shape_.w.kernel + tw) * cout, cout,
                        full_.begin() + ci * row + (oh * out_w + ow) * cout);
        }
      if (const float* b = ep && ep->bias() ? a.weights.f32(ep->bias()) : nullptr) {
        projection_bias_.resize(static_cast<size_t>(row));
        for (int64_t i = 0; i < row; ++i) projection_bias_[static_cast<size_t>(i)] = b[i % cout];
        bias_ = upload_.bytes(projection_bias_.data(), projection_bias_.size() * 4);
      }
      gemm_.shape = dense_gemm_shape(static_cast<int>(shape_.batch), static_cast<int>(shape_.in_channels), static_cast<int>(row));
      first_ = upload_.bytes(full_.data(), full_.size() * 4);
    } else if (algo_ == ConvTranspose2DAlgo::kSplit) {
      // Each phase's sub-kernel is its own buffer: the tasks address them from the
      // first one present (all sit in one allocation, or all in the mapped file).
      std::vector<int> slots;
      for (const auto* p : *op.phases()) {
        slots.push_back(upload_.weights(p->weights()));
        if (p->weights()) f16_ = a.weights.is_f16(p->weights());
      }
      first_ = -1;
      for (int s : slots)
        if (s >= 0 && (first_ < 0 || upload_.offset_between(first_, s) < 0)) first_ = s;
      std::vector<long long> offsets;
      for (int s : slots) offsets.push_back(s < 0 ? 0 : upload_.offset_between(first_, s) / (f16_ ? 2 : 4));
      gemm_.shape = conv_transpose2d_split_shape(shape_, phases_h, phases_w, offsets, static_cast<int>(op.weight_panel_columns()));
    } else {
      // The baselines read the whole kernel, assembled here from the phases.
      if (algo_ == ConvTranspose2DAlgo::kZeroInsert) {
        full_ = conv_transpose2d_flipped_kernel(shape_, full_kernel(a, op, kernels::FullKernelLayout::kTapsFirst).data());
        gemm_.shape = conv_transpose2d_zero_insert_shape(shape_);
        staging_bytes_ = static_cast<uint64_t>(conv_transpose2d_upsampled_floats(shape_)) * 4;
      } else {
        full_ = full_kernel(a, op, kernels::FullKernelLayout::kChannelsFirst);
        gemm_.shape = dense_gemm_shape(static_cast<int>(shape_.batch * shape_.h.in * shape_.w.in), static_cast<int>(shape_.in_channels),
                                       static_cast<int>(shape_.h.kernel * shape_.w.kernel * shape_.out_channels));
        staging_bytes_ = static_cast<uint64_t>(conv_transpose2d_columns_floats(shape_)) * 4;
      }
      staging_bytes_ = (staging_bytes_ + 255) / 256 * 256;
      first_ = upload_.bytes(full_.data(), full_.size() * 4);
    }
    gemm_.prepare(a, upload_);
    upload_.commit();
    full_ = {};
    projection_bias_ = {};
  }

  const char* kernel_name() const override {
    switch (algo_) {
      case ConvTranspose2DAlgo::kZeroInsert: return "cuda_conv_transpose2d_zero_insert";
      case ConvTranspose2DAlgo::kCol2im: return "cuda_conv_transpose2d_col2im";
      case ConvTranspose2DAlgo::kSplit: break;
    }
    return projection_ ? "cuda_conv_transpose2d_split_1x1_input" : "cuda_conv_transpose2d_split";
  }
  uint64_t workspace_bytes() const override { return staging_bytes_ + gemm_.launch.workspace_bytes; }
  uint64_t repacked_weight_bytes() const override { return upload_.device_bytes(); }
  uint64_t macs() const override { return conv_transpose2d_macs(shape_, algo_); }

  void run(const RunContext& ctx) override {
    run_kernels(ctx);
    prelu_.run(ctx, upload_);
  }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  void run_kernels(const RunContext& ctx) const {
    const float* x = ctx.f32(input_);
    float* y = ctx.f32(output_);
    const float* bias = upload_.as<float>(bias_);
    uint8_t* gemm_ws = ctx.workspace + staging_bytes_;
    switch (algo_) {
      case ConvTranspose2DAlgo::kSplit:
        return gemm_.run(upload_, x, y, upload_.at(first_), f16_ && !projection_, bias, activation_, nullptr, gemm_ws, stream_of(ctx));
      case ConvTranspose2DAlgo::kZeroInsert: {
        float* x_up = reinterpret_cast<float*>(ctx.workspace);
        conv_transpose2d_zero_insert_upsample(shape_, x, x_up, stream_of(ctx));
        return gemm_.run(upload_, x_up, y, upload_.at(first_), false, bias, activation_, nullptr, gemm_ws, stream_of(ctx));
      }
      case ConvTranspose2DAlgo::kCol2im: {
        float* columns = reinterpret_cast<float*>(ctx.workspace);
        gemm_.run(upload_, x, columns, upload_.at(first_), false, nullptr, ActivationParams{}, nullptr, gemm_ws, stream_of(ctx));
        return conv_transpose2d_col2im_gather(shape_, columns, bias, activation_, y, stream_of(ctx));
      }
    }
  }
  // The whole kernel in `layout`, assembled from the file's phases (fp16 widened).
  std::vector<float> full_kernel(const KernelArgs& a, const schema::ConvTranspose2D& op, kernels::FullKernelLayout layout) const {
    std::vector<std::vector<float>> widened;
    const kernels::ConvTranspose2DSubKernels w = phase_weights(a, op, shape_, widened);
    std::vector<float> full(static_cast<size_t>(shape_.h.kernel * shape_.w.kernel * shape_.in_channels * shape_.out_channels));
    kernels::assemble_conv_transpose2d_full_kernel(shape_, w, layout, full.data());
    return full;
  }

  KernelUpload upload_;
  ConvTranspose2DAlgo algo_;
  int input_, output_;
  kernels::ConvShape shape_;
  PreparedGemm gemm_;
  std::vector<float> full_, projection_bias_;  // host copies until they are uploaded
  bool projection_ = false;                    // a 1x1 input: one dense GEMM
  int first_ = -1, bias_ = -1;
  ActivationParams activation_;
  FusedPRelu prelu_;
  bool f16_ = false;
  uint64_t staging_bytes_ = 0;  // the baselines' upsampled input or columns, ahead of the GEMM's own scratch
};

class GroupedConvTranspose2DCuda final : public OpKernel {
 public:
  GroupedConvTranspose2DCuda(const KernelArgs& a, const schema::ConvTranspose2D& op)
      : upload_(a), input_(op.input()), output_(op.output()), shape_(a.conv_shape(op)), groups_(op.groups()),
        activation_(activation_params(op.epilogue())) {
    std::vector<std::vector<float>> widened;
    const kernels::ConvTranspose2DSubKernels w = phase_weights(a, op, shape_, widened);
    const std::vector<float> full = conv_transpose2d_grouped_full_kernel(shape_, groups_, w);
    weights_ = upload_.bytes(full.data(), full.size() * 4);
    bias_ = upload_.weights(op.epilogue() ? op.epilogue()->bias() : 0);
    prelu_ = FusedPRelu(a, upload_, op.epilogue(), op.output());
    upload_.commit();
  }
  const char* kernel_name() const override { return "cuda_conv_transpose2d_grouped_direct"; }
  uint64_t repacked_weight_bytes() const override { return upload_.device_bytes(); }
  uint64_t macs() const override { return conv_transpose2d_macs(shape_, ConvTranspose2DAlgo::kSplit) / static_cast<uint64_t>(groups_); }
  void run(const RunContext& ctx) override {
    conv_transpose2d_grouped_direct(shape_, groups_, ctx.f32(input_), upload_.as<float>(weights_), upload_.as<float>(bias_), activation_,
                                    ctx.f32(output_), stream_of(ctx));
    prelu_.run(ctx, upload_);
  }
  void backward(const BackwardContext&) override { no_backward(kernel_name()); }

 private:
  KernelUpload upload_;
  int input_, output_;
  kernels::ConvShape shape_;
  int groups_;
  ActivationParams activation_;
  FusedPRelu prelu_;
  int weights_ = -1, bias_ = -1;
};

}  // namespace

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_ConvTranspose2D>(const KernelArgs& a) {
  const auto& op = *a.op.kind_as_ConvTranspose2D();
  if (op.groups() != 1) return std::make_unique<GroupedConvTranspose2DCuda>(a, op);
  std::unique_ptr<OpKernel> own = std::make_unique<ConvTranspose2DCuda>(a, *a.op.kind_as_ConvTranspose2D());
#ifdef EDGEGAN_WITH_CUDNN
  // The split's phases as cuDNN convolutions, where they measure faster (the baselines stay ours).
  if (a.conv_transpose2d_algo == ConvTranspose2DAlgo::kSplit) return cudnn::choose_conv_tactic(a, std::move(own));
#endif
  return own;
}

}  // namespace edgegan::cuda
