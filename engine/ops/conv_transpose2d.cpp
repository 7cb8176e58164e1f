// ConvTranspose2D, stored split into stride_h*stride_w phases. The product runs the
// split kernel on the sub-kernels mapped from the file (in the Winograd form or, for
// 1-3 channel heads, the pixel-lanes path where they pay, on filters transformed
// once here; thin layers of 1-8 channels the phase-lanes path, on weights packed
// once here); the zero-insertion and col2im baselines reassemble the full kernel
// once here (never per run) and need a workspace. Backward: dX as the strided
// convolution of dY with the sub-kernels, dW per phase tap (or the zero-insertion
// baseline, for comparison). Grouped (groups > 1): the split kernel per group
// (conv_transpose2d_grouped.h) whatever algorithm the session asks for (the
// baselines, Winograd and pixel-lanes forms take no groups), forward and backward.
#include <algorithm>

#include "engine/ops/half_route.h"
#include "engine/ops/op_def.h"
#include "engine/ops/op_kernel_util.h"
#include "engine/ops/op_text.h"
#include "engine/ops/op_validator.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_backward.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_backward_zero_insert.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_col2im.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_grouped.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_phase_lanes.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_pixel_lanes.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_split.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_winograd.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_zero_insert.h"

namespace edgegan {
namespace {

// What every ConvTranspose2D backward does around its kernels, grouped or not: the
// activation's gradient in place, db, one scratch laid out as
//   [db][each phase's dW][dX, when another reader adds to the input's gradient][kernel scratch]
// and, after the kernels, the sums into the parameter and input gradients.
class PhaseBackward {
 public:
  // Sizes the scratch (kernel creation time).
  void plan(const KernelArgs& a, const cpu::ConvShape& shape, const std::vector<int64_t>& phase_floats, int64_t kernel_scratch_floats) {
    phase_floats_ = phase_floats;
    input_floats_ = shape.batch * shape.h.in * shape.w.in * shape.in_channels;
    accumulate_dx_ = a.accumulates(0);
    kernel_scratch_floats_ = kernel_scratch_floats;
    d_sub_kernels_.assign(phase_floats_.size(), nullptr);
    layout_.take(shape.out_channels);
    for (int64_t n : phase_floats_) layout_.take(n);
    if (accumulate_dx_) layout_.take(input_floats_);
    layout_.take(kernel_scratch_floats_);
  }
  uint64_t bytes() const { return layout_.bytes(); }
  int64_t kernel_scratch_floats() const { return kernel_scratch_floats_; }

  struct Step {
    float* dy;              // the output's gradient, through the activation
    float* dx;              // where the kernels write dX (nullptr: not wanted)
    float* kernel_scratch;  // kernel_scratch_floats()
    const std::vector<float*>& d_sub_kernels;  // each phase's dW (nullptr: tapless); empty: no parameter gradients
  };
  Step begin(const BackwardContext& b, const cpu::ConvShape& shape, int input, int output, const cpu::Epilogue& ep) {
    const int64_t pixels = shape.batch * shape.h.out * shape.w.out;
    float* g = b.grad(output);
    params_ = b.wants_parameters();
    const size_t bias_slot = phase_floats_.size();
    // A fused PRelu's slope gradient (the slot after the bias) comes with its activation gradient.
    cpu::epilogue_activation_backward(pixels, shape.out_channels, b.ctx.f32(output), g, ep, params_ ? b.parameter_gradient(bias_slot + 1) : nullptr);
    ScratchLayout scratch(b.ctx.workspace);
    float* db = scratch.take(shape.out_channels);
    if (params_ && b.parameter_gradient(bias_slot)) {
      cpu::bias_backward(pixels, shape.out_channels, g, db);
      add_into(b.parameter_gradient(bias_slot), db, shape.out_channels);
    }
    for (size_t p = 0; p < phase_floats_.size(); ++p) {
      float* d = scratch.take(phase_floats_[p]);
      d_sub_kernels_[p] = phase_floats_[p] > 0 ? d : nullptr;
    }
    float* dx_scratch = accumulate_dx_ ? scratch.take(input_floats_) : nullptr;
    float* kernel_scratch = scratch.take(kernel_scratch_floats_);
    dx_ = b.wants(0) ? input_gradient_target(b, input, 0, dx_scratch) : nullptr;
    return {g, dx_, kernel_scratch, params_ ? d_sub_kernels_ : no_gradients_};
  }
  // After the kernels: each phase's dW into its parameter gradient, dX into the input's.
  void finish(const BackwardContext& b, int input) {
    if (params_)
      for (size_t p = 0; p < phase_floats_.size(); ++p)
        if (d_sub_kernels_[p]) add_into(b.parameter_gradient(p), d_sub_kernels_[p], phase_floats_[p]);
    if (dx_) finish_input_gradient(b, input, 0, dx_, input_floats_);
  }

 private:
  std::vector<int64_t> phase_floats_;
  int64_t input_floats_ = 0, kernel_scratch_floats_ = 0;
  bool accumulate_dx_ = false, params_ = false;
  ScratchLayout layout_;               // sizes only
  std::vector<float*> d_sub_kernels_;  // kept between calls so that backward allocates nothing
  const std::vector<float*> no_gradients_{};
  float* dx_ = nullptr;
};

class ConvTranspose2DKernel final : public OpKernel {
 public:
  ConvTranspose2DKernel(const OpDef& def, const KernelArgs& a, const schema::ConvTranspose2D& op)
      : overflow_(def, a.op), algo_(a.conv_transpose2d_algo), input_(op.input()), output_(op.output()), epilogue_(a.epilogue(op.epilogue())), shape_(a.conv_shape(op)),
        zero_insert_backward_(a.zero_insert_backward) {
    weights_.phases_h = cpu::split_conv_transpose_axis(shape_.h);
    weights_.phases_w = cpu::split_conv_transpose_axis(shape_.w);
    weights_.panel_columns = op.weight_panel_columns();
    // fp16 weights (all phases or none: the converter writes one precision per op) are
    // read in place by the split kernel.
    const bool fp16 = std::any_of(op.phases()->begin(), op.phases()->end(), [&](const auto* p) { return a.weights.is_f16(p->weights()); });
    for (const auto* p : *op.phases()) {
      if (fp16) weights_.sub_kernels_f16.push_back(a.weights.f16(p->weights()));
      else weights_.sub_kernels.push_back(a.weights.f32(p->weights()));
      phase_floats_.push_back(p->weights() ? static_cast<int64_t>(a.model.buffer_elements(p->weights())) : 0);
    }
    if (algo_ == ConvTranspose2DAlgo::kSplit) {
      // Planned here once, for every run (not ok: the head, if it is one, takes the dot
      // path). Heads on the pixel-lanes path read their weights in that kernel's order:
      // packed here (a few KiB per head).
      lanes_plan_ = cpu::plan_pixel_lanes(shape_, weights_.phases_h, weights_.phases_w);
      if (!cpu::pixel_lanes_available(lanes_plan_)) lanes_plan_ = {};
      weights_.pixel_lanes_plan = &lanes_plan_;
      if (lanes_plan_.ok && a.tracker) {
        lanes_weights_ = TrackedBuffer(*a.tracker, static_cast<uint64_t>(lanes_plan_.weight_floats()) * 4);
        weights_.pixel_lanes = lanes_weights_.floats();
      }
      // Thin layers (1-8 output channels) where the phase-lanes path pays read their
      // weights in that kernel's order: planned and packed here (a few KiB to 100 KiB).
      phase_lanes_plan_ = cpu::plan_phase_lanes(shape_, weights_.phases_h, weights_.phases_w);
      weights_.phase_lanes_plan = &phase_lanes_plan_;
      phase_lanes_ = cpu::conv_transpose2d_split_phase_lanes(shape_, weights_);
      if (!phase_lanes_) {
        phase_lanes_plan_ = {};
        weights_.phase_lanes_plan = nullptr;
      } else if (a.tracker) {
        phase_lanes_weights_ = TrackedBuffer(*a.tracker, static_cast<uint64_t>(phase_lanes_plan_.weight_floats()) * 4);
        weights_.phase_lanes = phase_lanes_weights_.floats();
      }
      // k = 2*stride layers with enough output for it run in the Winograd form, on
      // filters transformed here (9/4 of the float sub-kernels).
      // Wider filters are made in every run, in front of the workspace. (Only Conv2D's
      // filters count against the session's copy budget: these are kept at 2 MiB or less.)
      // The widest make them a slice at a time inside the kernel (no whole filters).
      winograd_ = !phase_lanes_ && cpu::conv_transpose2d_winograd_pays(shape_, weights_);
      weights_.winograd_sliced = winograd_ && cpu::conv_transpose2d_winograd_sliced(shape_);
      if (winograd_ && !weights_.winograd_sliced) {
        winograd_filters_.plan(a, cpu::conv_transpose2d_winograd_weight_floats(shape_), cpu::conv_transpose2d_winograd_keeps_filters(shape_),
                               nullptr);
        weights_.winograd = winograd_filters_.kept();
      }
      // Scratch for the heads (each thread's rows of transposed input, or the
      // transposed sub-kernels) and the Winograd form (each thread's transformed
      // windows and products), planned for the session's threads.
      // fp16: the GEMM path and the Winograd form read and write halves themselves (the
      // heads and thin layers are left to the adapter).
      // (Filters made per run are not set yet: winograd_ says the form, not the weights.)
      halves_ = half_storage(a) && !a.training && (winograd_ || cpu::conv_transpose2d_split_halves_applies(shape_, weights_));
      split_workspace_floats_ = winograd_ ? winograd_filters_.run_floats() +
                                                cpu::conv_transpose2d_winograd_workspace(shape_, a.threads, weights_.winograd_sliced, halves_)
                                : halves_ ? cpu::conv_transpose2d_split_halves_workspace(shape_, weights_, a.threads)
                                          : cpu::conv_transpose2d_split_workspace(shape_, weights_, a.threads);
    } else if (a.tracker) {
      // The baselines take float: fp16 phases are widened for the one-off assembly.
      if (fp16)
        for (const auto* p : *op.phases()) widened_.push_back(a.model.widened(p->weights()));
      full_kernel_ = TrackedBuffer(*a.tracker, repacked_weight_bytes());
    }
    if (a.tracker) weights_changed();
    if (a.training) plan_backward(a);
  }

  // Copies made from the weights: the heads' packed weights, the Winograd filters or
  // the baselines' full kernel.
  void weights_changed() override {
    if (lanes_weights_.data()) cpu::pack_pixel_lanes_weights(shape_, weights_, lanes_plan_, lanes_weights_.floats());
    if (phase_lanes_weights_.data()) cpu::pack_phase_lanes_weights(shape_, weights_, phase_lanes_plan_, phase_lanes_weights_.floats());
    if (winograd_filters_.kept()) cpu::pack_conv_transpose2d_winograd_weights(shape_, weights_, winograd_filters_.kept());
    if (full_kernel_.data()) {
      cpu::ConvTranspose2DWeights source = weights_;
      if (!widened_.empty()) {
        source.sub_kernels_f16.clear();
        for (const auto& w : widened_) source.sub_kernels.push_back(w.empty() ? nullptr : w.data());
      }
      cpu::assemble_conv_transpose2d_full_kernel(shape_, source,
                                                 algo_ == ConvTranspose2DAlgo::kZeroInsert ? cpu::FullKernelLayout::kTapsFirst
                                                                                         : cpu::FullKernelLayout::kChannelsFirst,
                                                 full_kernel_.floats());
    }
  }

  const char* kernel_name() const override {
    switch (algo_) {
      case ConvTranspose2DAlgo::kZeroInsert: return "conv_transpose2d_zero_insert";
      case ConvTranspose2DAlgo::kCol2im: return "conv_transpose2d_col2im";
      case ConvTranspose2DAlgo::kSplit: break;
    }
    if (halves_) return winograd_ ? "conv_transpose2d_split_winograd_f16" : "conv_transpose2d_split_f16";
    return winograd_ ? "conv_transpose2d_split_winograd" : phase_lanes_ ? "conv_transpose2d_split_phase_lanes" : "conv_transpose2d_split";
  }
  bool stores_halves() const override { return halves_; }
  void check_run() override { overflow_.check(); }

  uint64_t workspace_bytes() const override {
    switch (algo_) {
      case ConvTranspose2DAlgo::kZeroInsert: return static_cast<uint64_t>(cpu::conv_transpose2d_zero_insert_workspace(shape_)) * 4;  // < 2^64
      case ConvTranspose2DAlgo::kCol2im: return static_cast<uint64_t>(cpu::conv_transpose2d_col2im_workspace(shape_)) * 4;
      case ConvTranspose2DAlgo::kSplit: break;
    }
    return static_cast<uint64_t>(split_workspace_floats_) * 4;
  }

  // The baselines need the whole kernel in one piece, rebuilt once from the phases;
  // split heads on the pixel-lanes path, their weights in that kernel's order; split
  // layers in the Winograd form, their transformed filters.
  uint64_t repacked_weight_bytes() const override {
    if (algo_ == ConvTranspose2DAlgo::kSplit)
      return (lanes_plan_.ok ? static_cast<uint64_t>(lanes_plan_.weight_floats()) * 4 : 0) +
             (phase_lanes_ ? static_cast<uint64_t>(phase_lanes_plan_.weight_floats()) * 4 : 0) +
             (winograd_ ? winograd_filters_.kept_bytes() : 0);
    return static_cast<uint64_t>(full_kernel_floats()) * 4;
  }

  uint64_t macs() const override { return conv_transpose2d_macs(shape_, algo_); }

  void run(const RunContext& ctx) override {
    const float* x = ctx.f32(input_);
    float* y = ctx.f32(output_);
    float* ws = reinterpret_cast<float*>(ctx.workspace);
    switch (algo_) {
      case ConvTranspose2DAlgo::kZeroInsert: return cpu::conv_transpose2d_zero_insert(shape_, full_kernel_.floats(), x, y, ws, epilogue_, ctx.threads);
      case ConvTranspose2DAlgo::kCol2im: return cpu::conv_transpose2d_col2im(shape_, full_kernel_.floats(), x, y, ws, epilogue_, ctx.threads);
      case ConvTranspose2DAlgo::kSplit: break;
    }
    if (winograd_filters_.made_per_run()) {  // this run's filters, then the form's own scratch after them
      weights_.winograd = ws;
      cpu::pack_conv_transpose2d_winograd_weights(shape_, weights_, ws, ctx.threads);
    }
    const int64_t in_front = winograd_filters_.run_floats();
    if (halves_) {
      overflow_.clear();
      const auto* xh = reinterpret_cast<const uint16_t*>((*ctx.tensors)[static_cast<size_t>(input_)]);
      auto* yh = reinterpret_cast<uint16_t*>((*ctx.tensors)[static_cast<size_t>(output_)]);
      return overflow_.add(cpu::conv_transpose2d_split_halves(shape_, weights_, xh, yh, epilogue_, ctx.threads, ws + in_front,
                                                              split_workspace_floats_ - in_front));
    }
    cpu::conv_transpose2d_split(shape_, weights_, x, y, epilogue_, ctx.threads, ws + in_front, split_workspace_floats_ - in_front);
  }

  uint64_t backward_workspace_bytes() const override { return backward_.bytes(); }

  void backward(const BackwardContext& b) override {
    const PhaseBackward::Step step = backward_.begin(b, shape_, input_, output_, epilogue_);
    const float* x = b.ctx.f32(input_);
    const bool params = !step.d_sub_kernels.empty();
    if (zero_insert_backward_) {
      // The baseline: the full kernel assembled from the phases, the gradient of the
      // full kernel scattered back into them.
      float* full = step.kernel_scratch;
      float* d_full = full + full_kernel_floats();
      float* ws = d_full + full_kernel_floats();
      cpu::assemble_conv_transpose2d_full_kernel(shape_, weights_, cpu::FullKernelLayout::kTapsFirst, full);
      if (params) {
        cpu::conv_transpose2d_zero_insert_backward_weights(shape_, x, step.dy, d_full, ws, b.ctx.threads);
        cpu::scatter_conv_transpose2d_full_kernel(shape_, weights_.phases_h, weights_.phases_w, d_full, step.d_sub_kernels, weights_.panel_columns);
      }
      if (step.dx) cpu::conv_transpose2d_zero_insert_backward_input(shape_, full, step.dy, step.dx, ws, b.ctx.threads);
    } else {
      if (params)
        cpu::conv_transpose2d_backward_weights(shape_, weights_.phases_h, weights_.phases_w, x, step.dy, step.d_sub_kernels, b.ctx.threads,
                                               weights_.panel_columns, step.kernel_scratch);
      if (step.dx)
        cpu::conv_transpose2d_backward_input(shape_, weights_, step.dy, step.dx, step.kernel_scratch, b.ctx.threads,
                                             backward_.kernel_scratch_floats());
    }
    backward_.finish(b, input_);
  }

 private:
  int64_t full_kernel_floats() const {
    return cpu::saturating_product({shape_.h.kernel, shape_.w.kernel, shape_.in_channels, shape_.out_channels});
  }
  int64_t zero_insert_workspace_floats() const {
    return std::max(cpu::conv_transpose2d_zero_insert_backward_input_workspace(shape_),
                    cpu::conv_transpose2d_zero_insert_backward_weights_workspace(shape_));
  }
  // Sizes the backward scratch: the kernels' share is the weight gradient's or the input
  // gradient's (they run one after the other in one place).
  void plan_backward(const KernelArgs& a) {
    const int64_t kernel_scratch_floats =
        zero_insert_backward_ ? 2 * full_kernel_floats() + zero_insert_workspace_floats()
                              : std::max(cpu::conv_transpose2d_backward_weights_workspace(shape_, weights_.phases_h, weights_.phases_w, a.threads,
                                                                                          weights_.panel_columns),
                                         cpu::conv_transpose2d_backward_input_workspace(shape_, a.threads));
    backward_.plan(a, shape_, phase_floats_, kernel_scratch_floats);
  }

  HalfOverflow overflow_;  // the fp16 route's output past the half range
  ConvTranspose2DAlgo algo_;
  int input_, output_;
  cpu::Epilogue epilogue_;
  cpu::ConvShape shape_;
  cpu::ConvTranspose2DWeights weights_;
  std::vector<int64_t> phase_floats_;      // each phase's sub-kernel (0: tapless)
  std::vector<std::vector<float>> widened_;  // baselines over fp16 weights: the phases in float
  TrackedBuffer full_kernel_;              // baselines only
  cpu::PixelLanesPlan lanes_plan_;         // ok: a head on the pixel-lanes path
  TrackedBuffer lanes_weights_;
  bool phase_lanes_ = false;               // a thin layer on the phase-lanes path
  cpu::PhaseLanesPlan phase_lanes_plan_;
  TrackedBuffer phase_lanes_weights_;
  bool winograd_ = false;                  // split in the Winograd form (planned even without a tracker)
  TransformedFilters winograd_filters_;    // its transformed filters
  int64_t split_workspace_floats_ = 0;
  bool halves_ = false;  // an fp16 session's native route (conv_transpose2d_split_halves)
  // Training.
  bool zero_insert_backward_ = false;
  PhaseBackward backward_;
};

// groups > 1: every algorithm runs the grouped split kernel; backward by the split
// backward per group (the zero-insertion backward baseline too).
class GroupedConvTranspose2DKernel final : public OpKernel {
 public:
  GroupedConvTranspose2DKernel(const KernelArgs& a, const schema::ConvTranspose2D& op)
      : input_(op.input()), output_(op.output()), epilogue_(a.epilogue(op.epilogue())), shape_(a.conv_shape(op)), groups_(op.groups()) {
    cpu::ConvTranspose2DWeights weights;
    weights.phases_h = cpu::split_conv_transpose_axis(shape_.h);
    weights.phases_w = cpu::split_conv_transpose_axis(shape_.w);
    weights.panel_columns = op.weight_panel_columns();
    const bool fp16 = std::any_of(op.phases()->begin(), op.phases()->end(), [&](const auto* p) { return a.weights.is_f16(p->weights()); });
    for (const auto* p : *op.phases()) {
      if (fp16) weights.sub_kernels_f16.push_back(a.weights.f16(p->weights()));
      else weights.sub_kernels.push_back(a.weights.f32(p->weights()));
      phase_floats_.push_back(p->weights() ? static_cast<int64_t>(a.model.buffer_elements(p->weights())) : 0);
    }
    views_ = cpu::conv_transpose2d_group_views(shape_, groups_, weights);
    workspace_floats_ = cpu::conv_transpose2d_grouped_workspace(shape_, views_, a.threads);
    if (!a.training) return;
    group_d_sub_kernels_.assign(phase_floats_.size(), nullptr);
    backward_.plan(a, shape_, phase_floats_, cpu::conv_transpose2d_grouped_backward_workspace(shape_, views_, a.threads));
  }
  const char* kernel_name() const override { return "conv_transpose2d_split_grouped"; }
  uint64_t workspace_bytes() const override { return static_cast<uint64_t>(workspace_floats_) * 4; }
  uint64_t macs() const override { return conv_transpose2d_macs(shape_, ConvTranspose2DAlgo::kSplit) / static_cast<uint64_t>(groups_); }
  void run(const RunContext& ctx) override {
    cpu::conv_transpose2d_grouped(shape_, views_, ctx.f32(input_), ctx.f32(output_), epilogue_, ctx.threads,
                                  reinterpret_cast<float*>(ctx.workspace), workspace_floats_);
  }
  uint64_t backward_workspace_bytes() const override { return backward_.bytes(); }
  void backward(const BackwardContext& b) override {
    const PhaseBackward::Step step = backward_.begin(b, shape_, input_, output_, epilogue_);
    cpu::conv_transpose2d_grouped_backward(shape_, views_, b.ctx.f32(input_), step.dy, step.dx, step.d_sub_kernels, group_d_sub_kernels_,
                                           b.ctx.threads, step.kernel_scratch, backward_.kernel_scratch_floats());
    backward_.finish(b, input_);
  }

 private:
  int input_, output_;
  cpu::Epilogue epilogue_;
  cpu::ConvShape shape_;
  int64_t groups_;
  std::vector<cpu::ConvTranspose2DWeights> views_;  // per group, into the file's (or trainer's) sub-kernels
  std::vector<int64_t> phase_floats_;
  int64_t workspace_floats_ = 0;
  // Training.
  PhaseBackward backward_;
  std::vector<float*> group_d_sub_kernels_;  // kept between calls so that backward allocates nothing
};

class ConvTranspose2DDef final : public OpDef {
 public:
  const char* name() const override { return "ConvTranspose2D"; }
  std::vector<int> inputs(const schema::Op& op) const override { return {op.kind_as_ConvTranspose2D()->input()}; }
  int output(const schema::Op& op) const override { return op.kind_as_ConvTranspose2D()->output(); }

  void validate(const schema::Op& o, OpValidator& v) const override {
    const auto& op = *o.kind_as_ConvTranspose2D();
    // Transposed convolutions may have negative pads (ONNX output_shape asks for extra output).
    const TensorDesc& x = v.check_conv_params(op, -kMaxPad);
    const int groups = op.groups();
    if (groups < 1 || groups > op.in_channels()) v.fail("groups " + std::to_string(groups) + " is out of range (1 to in_channels)");
    if (op.in_channels() % groups != 0 || op.out_channels() % groups != 0)
      v.fail("groups " + std::to_string(groups) + " does not divide in_channels " + std::to_string(op.in_channels()) + " and out_channels " +
             std::to_string(op.out_channels()));
    cpu::ConvAxis h{x.dims[1], op.kernel_h(), op.stride_h(), op.dilation_h(), op.pad_top(), op.pad_bottom(), 0};
    cpu::ConvAxis w{x.dims[2], op.kernel_w(), op.stride_w(), op.dilation_w(), op.pad_left(), op.pad_right(), 0};
    // The output length also absorbs output_padding, so it is read from the output tensor and
    // must lie within [length without output_padding, that + max(stride, dilation) - 1] (PyTorch's rule).
    TensorDesc& y = v.define(op.output());
    if (y.layout != Layout::kNHWC || y.dims.size() != 4) v.fail("output must be an NHWC image tensor");
    if (v.resizing()) {  // the file's output_padding, kept at the new size
      const std::vector<int64_t>& file_x = v.file_dims(op.input());
      const std::vector<int64_t>& file_y = v.file_dims(op.output());
      std::vector<int64_t> dims = file_y;
      for (size_t k : {size_t{1}, size_t{2}}) {
        const cpu::ConvAxis& axis = k == 1 ? h : w;
        const int64_t file_base = cpu::conv_transpose_output_length(file_x[k], axis.kernel, axis.stride, axis.dilation, axis.pad_begin, axis.pad_end, 0);
        dims[k] = cpu::conv_transpose_output_length(axis.in, axis.kernel, axis.stride, axis.dilation, axis.pad_begin, axis.pad_end, 0) +
                  (file_y[k] - file_base);
      }
      v.derive_dims(y, dims);
    }
    v.expect_float(y);
    if (y.dims[3] != op.out_channels())
      v.fail("output has " + std::to_string(y.dims[3]) + " channels, the op produces " + std::to_string(op.out_channels()));
    h.out = y.dims[1];
    w.out = y.dims[2];
    for (const auto* axis : {&h, &w}) {
      const int64_t base = cpu::conv_transpose_output_length(axis->in, axis->kernel, axis->stride, axis->dilation, axis->pad_begin, axis->pad_end, 0);
      const int64_t max_output_padding = std::max(axis->stride, axis->dilation) - 1;
      if (axis->out < base || axis->out > base + max_output_padding)
        v.fail("output length " + std::to_string(axis->out) + " does not follow from input " + std::to_string(axis->in) +
               ", kernel, stride and pads (expected " + std::to_string(base) +
               " + output_padding, output_padding < max(stride, dilation))");
    }
    const auto ph = cpu::split_conv_transpose_axis(h), pw = cpu::split_conv_transpose_axis(w);
    check_axis_phases(v, op.axis_phases_h(), ph, " (height phases)");
    check_axis_phases(v, op.axis_phases_w(), pw, " (width phases)");
    const auto* phases = op.phases();
    if (!phases || phases->size() != static_cast<uint32_t>(op.stride_h() * op.stride_w()))
      v.fail("must store stride_h*stride_w = " + std::to_string(op.stride_h() * op.stride_w()) + " phases");
    int fp16_phases = 0, stored_phases = 0;
    const auto* buffers = v.model().root->buffers();
    for (uint32_t i = 0; i < phases->size(); ++i) {
      const auto* p = phases->Get(i);
      const OpValidator pv = v.at(" phase " + std::to_string(i));
      if (!p) pv.fail("null entry");
      if (p->phase_h() != static_cast<int>(i / op.stride_w()) || p->phase_w() != static_cast<int>(i % op.stride_w()))
        pv.fail("phases must be stored in row-major (phase_h, phase_w) order");
      const uint64_t taps = ph[i / op.stride_w()].taps.size() * pw[i % op.stride_w()].taps.size();
      // Grouped: the groups' [taps][Cin/groups][Cout/groups] one after the other.
      pv.expect_buffer(p->weights(), taps * static_cast<uint64_t>(op.in_channels()) * static_cast<uint64_t>(op.out_channels() / groups), "sub-kernel",
                       false, /*fp16_allowed=*/true);
      if (p->weights() != 0) {
        ++stored_phases;
        fp16_phases += buffers->Get(p->weights())->dtype() == schema::DType_Float16 ? 1 : 0;
      }
    }
    if (fp16_phases != 0 && fp16_phases != stored_phases) v.fail("mixes float16 and float32 sub-kernels (one precision per op)");
    v.check_epilogue(op.epilogue(), op.out_channels(), true);
  }

  void describe(const Model::Impl& m, const schema::Op& o, OpInfo& info) const override {
    const auto& c = *o.kind_as_ConvTranspose2D();
    info.attributes = conv_text(c);
    for (const auto* p : *c.phases()) {
      PhaseInfo ph;
      ph.phase_h = p->phase_h();
      ph.phase_w = p->phase_w();
      ph.taps_h = static_cast<int>(c.axis_phases_h()->Get(static_cast<uint32_t>(p->phase_h()))->taps()->size());
      ph.taps_w = static_cast<int>(c.axis_phases_w()->Get(static_cast<uint32_t>(p->phase_w()))->taps()->size());
      info.phases.push_back(ph);
      info.weight_bytes += m.buffer_bytes(p->weights());
      info.fp16_weights |= m.is_f16(p->weights());
    }
    if (c.epilogue()) info.weight_bytes += m.buffer_bytes(c.epilogue()->bias());
    // One panel as wide as Cout (a group's, when grouped) is the plain layout: reported as 0.
    info.weight_panel_columns = static_cast<int64_t>(c.weight_panel_columns()) < c.out_channels() / std::max(1, c.groups())
                                    ? static_cast<int>(c.weight_panel_columns())
                                    : 0;
  }

  std::vector<ParameterSlot> parameters(const schema::Op& o) const override {
    const auto& c = *o.kind_as_ConvTranspose2D();
    std::vector<ParameterSlot> slots;
    for (const auto* p : *c.phases())
      slots.push_back({"phase (" + std::to_string(p->phase_h()) + "," + std::to_string(p->phase_w()) + ") weights", p->weights()});
    slots.push_back({"bias", c.epilogue() ? c.epilogue()->bias() : 0u});
    slots.push_back({"slope", c.epilogue() ? c.epilogue()->slope() : 0u});
    return slots;
  }

  std::unique_ptr<OpKernel> create_cpu_kernel(const KernelArgs& a) const override {
    const auto& op = *a.op.kind_as_ConvTranspose2D();
    if (op.groups() != 1) return std::make_unique<GroupedConvTranspose2DKernel>(a, op);
    return std::make_unique<ConvTranspose2DKernel>(*this, a, op);
  }

 private:
  static void check_axis_phases(const OpValidator& v, const flatbuffers::Vector<flatbuffers::Offset<schema::AxisPhase>>* stored,
                                const std::vector<cpu::AxisPhase>& expected, const char* axis) {
    if (!stored || stored->size() != expected.size()) v.at(axis).fail("must hold one entry per stride residue");
    for (uint32_t r = 0; r < stored->size(); ++r) {
      const auto* p = stored->Get(r);
      const auto& e = expected[r];
      bool same = p && p->residue() == static_cast<int>(e.residue) && p->taps() && p->offsets() && p->taps()->size() == e.taps.size() &&
                  p->offsets()->size() == e.offsets.size();
      for (uint32_t t = 0; same && t < e.taps.size(); ++t) same = p->taps()->Get(t) == e.taps[t] && p->offsets()->Get(t) == e.offsets[t];
      if (!same) v.at(axis).fail("residue " + std::to_string(r) + " does not match the split of its kernel/stride/dilation");
    }
  }
};

}  // namespace

template <>
const OpDef& op_definition<schema::OpKind_ConvTranspose2D>() {
  static const ConvTranspose2DDef def;
  return def;
}

}  // namespace edgegan
