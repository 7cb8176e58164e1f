// ConvTranspose2D: runs the split kernel on the pre-split sub-kernels mapped from
// the file; the zero-insertion and col2im baselines reassemble the full kernel
// once here (never per run) and need a workspace.
#include <algorithm>

#include "engine/ops/op_kernel.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_split.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_pixel_lanes.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_winograd.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_zero_insert.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_col2im.h"
#include "kernels_cpu/common/conv_geometry.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"

namespace edgegan {
namespace {

class ConvTranspose2DKernel final : public OpKernel {
 public:
  ConvTranspose2DKernel(const Model::Impl& m, const schema::ConvTranspose2D& op, ConvTransposeAlgo algo, int64_t batch, int threads,
                        MemoryTracker* tracker)
      : algo_(algo), input_(op.input()), output_(op.output()), epilogue_(make_epilogue(m, op.epilogue())) {
    shape_ = deconv_shape_of(m, op, batch);
    weights_.phases_h = cpu::split_conv_transpose_axis(shape_.h);
    weights_.phases_w = cpu::split_conv_transpose_axis(shape_.w);
    weights_.panel_columns = op.weight_panel_columns();
    // fp16 weights (all phases or none: the converter writes one precision per op)
    // are read in place by the split kernel.
    const bool fp16 = std::any_of(op.phases()->begin(), op.phases()->end(), [&](const auto* p) { return m.is_f16(p->weights()); });
    for (const auto* p : *op.phases()) {
      if (fp16) weights_.sub_kernels_f16.push_back(m.f16(p->weights()));
      else weights_.sub_kernels.push_back(m.f32(p->weights()));
    }
    if (algo_ == ConvTransposeAlgo::kSplit) {
      // Planned here once, for every run (not ok: the head, if it is one, takes the dot
      // path). Heads on the pixel-lanes path read their weights in that kernel's order:
      // packed here once too (a few KiB per head).
      lanes_plan_ = cpu::plan_pixel_lanes(shape_, weights_.phases_h, weights_.phases_w);
      if (!cpu::pixel_lanes_available(lanes_plan_)) lanes_plan_ = {};
      weights_.pixel_lanes_plan = &lanes_plan_;
      if (lanes_plan_.ok && tracker) {
        lanes_weights_ = TrackedBuffer(*tracker, static_cast<uint64_t>(lanes_plan_.weight_floats()) * 4);
        cpu::pack_pixel_lanes_weights(shape_, weights_, lanes_plan_, lanes_weights_.floats());
        weights_.pixel_lanes = lanes_weights_.floats();
      }
      // k = 2*stride layers with enough output for it run in the Winograd form, on
      // filters transformed here once (9/4 of the float sub-kernels).
      winograd_ = cpu::conv_transpose2d_winograd_pays(shape_, weights_);
      if (winograd_ && tracker) {
        winograd_weights_ = TrackedBuffer(*tracker, static_cast<uint64_t>(cpu::conv_transpose2d_winograd_weight_floats(shape_)) * 4);
        cpu::pack_conv_transpose2d_winograd_weights(shape_, weights_, winograd_weights_.floats());
        weights_.winograd = winograd_weights_.floats();
      }
      // Scratch for the heads (each thread's rows of transposed input, or the
      // transposed sub-kernels) and the Winograd form (each thread's transformed
      // windows and products), planned for the session's threads.
      split_workspace_floats_ = winograd_ ? cpu::conv_transpose2d_winograd_workspace(shape_, threads)
                                          : cpu::conv_transpose2d_split_workspace(shape_, weights_, threads);
    }
    if (algo_ != ConvTransposeAlgo::kSplit && tracker) {
      // The baselines take float: widen fp16 phases for the one-off assembly.
      std::vector<std::vector<float>> widened;
      cpu::ConvTranspose2DWeights source = weights_;
      if (fp16) {
        source.sub_kernels_f16.clear();
        for (const auto* p : *op.phases()) {
          widened.push_back(m.widened(p->weights()));
          source.sub_kernels.push_back(widened.back().empty() ? nullptr : widened.back().data());
        }
      }
      full_kernel_ = TrackedBuffer(*tracker, repacked_weight_bytes());
      cpu::assemble_conv_transpose2d_full_kernel(shape_, source,
                                       algo_ == ConvTransposeAlgo::kZeroInsert ? cpu::FullKernelLayout::kTapsFirst : cpu::FullKernelLayout::kChannelsFirst,
                                       full_kernel_.floats());
    }
  }

  const char* kernel_name() const override {
    switch (algo_) {
      case ConvTransposeAlgo::kZeroInsert: return "conv_transpose2d_zero_insert";
      case ConvTransposeAlgo::kCol2im: return "conv_transpose2d_col2im";
      default: return winograd_ ? "conv_transpose2d_split_winograd" : "conv_transpose2d_split";
    }
  }

  uint64_t workspace_bytes() const override {
    switch (algo_) {
      case ConvTransposeAlgo::kZeroInsert: return static_cast<uint64_t>(cpu::conv_transpose2d_zero_insert_workspace(shape_)) * 4;  // < 2^64
      case ConvTransposeAlgo::kCol2im: return static_cast<uint64_t>(cpu::conv_transpose2d_col2im_workspace(shape_)) * 4;
      default: return static_cast<uint64_t>(split_workspace_floats_) * 4;
    }
  }

  // The baselines need the whole kernel in one piece, rebuilt once from the phases;
  // split heads on the pixel-lanes path, their weights in that kernel's order; split
  // layers in the Winograd form, their transformed filters.
  uint64_t repacked_weight_bytes() const override {
    if (algo_ == ConvTransposeAlgo::kSplit)
      return (lanes_plan_.ok ? static_cast<uint64_t>(lanes_plan_.weight_floats()) * 4 : 0) +
             (winograd_ ? static_cast<uint64_t>(cpu::conv_transpose2d_winograd_weight_floats(shape_)) * 4 : 0);
    return static_cast<uint64_t>(cpu::saturating_product({shape_.h.kernel, shape_.w.kernel, shape_.in_channels, shape_.out_channels, 4}));
  }

  uint64_t macs() const override {
    const auto& s = shape_;
    switch (algo_) {
      case ConvTransposeAlgo::kZeroInsert:  // every tap of every output, zeros included
        return static_cast<uint64_t>(cpu::saturating_product({s.batch, s.in_channels, s.out_channels, s.h.out, s.w.out, s.h.kernel, s.w.kernel}));
      case ConvTransposeAlgo::kCol2im:  // every tap of every input, including products that fall outside the output
        return static_cast<uint64_t>(cpu::saturating_product({s.batch, s.in_channels, s.out_channels, s.h.in, s.w.in, s.h.kernel, s.w.kernel}));
      default:  // only (input, tap) pairs that land inside the output
        return static_cast<uint64_t>(cpu::saturating_product({s.batch, s.in_channels, s.out_channels,
                                                              static_cast<int64_t>(cpu::conv_transpose_useful_pairs(s.h)),
                                                              static_cast<int64_t>(cpu::conv_transpose_useful_pairs(s.w))}));
    }
  }

  void run(const RunContext& ctx) override {
    const float* x = ctx.f32(input_);
    float* y = ctx.f32(output_);
    float* ws = reinterpret_cast<float*>(ctx.workspace);
    switch (algo_) {
      case ConvTransposeAlgo::kZeroInsert: cpu::conv_transpose2d_zero_insert(shape_, full_kernel_.floats(), x, y, ws, epilogue_, ctx.threads); break;
      case ConvTransposeAlgo::kCol2im: cpu::conv_transpose2d_col2im(shape_, full_kernel_.floats(), x, y, ws, epilogue_, ctx.threads); break;
      default:
        cpu::conv_transpose2d_split(shape_, weights_, x, y, epilogue_, ctx.threads, ws, split_workspace_floats_);
        break;
    }
  }

 private:
  ConvTransposeAlgo algo_;
  int input_, output_;
  cpu::Epilogue epilogue_;
  cpu::ConvShape shape_;
  cpu::ConvTranspose2DWeights weights_;
  TrackedBuffer full_kernel_;  // baselines only
  cpu::PixelLanesPlan lanes_plan_;  // ok: a head on the pixel-lanes path
  TrackedBuffer lanes_weights_;
  bool winograd_ = false;           // split in the Winograd form (planned even without a tracker)
  TrackedBuffer winograd_weights_;  // its transformed filters
  int64_t split_workspace_floats_ = 0;
};

}  // namespace

std::unique_ptr<OpKernel> make_conv_transpose2d(const Model::Impl& m, const schema::ConvTranspose2D& op, ConvTransposeAlgo algo, int64_t batch,
                                                int threads, MemoryTracker* tracker) {
  return std::make_unique<ConvTranspose2DKernel>(m, op, algo, batch, threads, tracker);
}

}  // namespace edgegan
