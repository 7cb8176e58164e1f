// Conv2D: NHWC convolution, weights [kh][kw][Cin/groups][Cout], bias and activation in the epilogue,
// then an optional residual tensor added (a fused residual/skip Add; only without activation).
// groups = 1: conv2d_trimmed, or for 3x3 stride-1 layers where it measured faster the
// Winograd form F(4x4, 3x3) on filters transformed once per session, or in every run
// where a kept copy would be large (conv2d_winograd) unless the layer is wide with windows
// enough for F(6x6, 3x3) on filter slices made per task (conv2d_winograd_f6), for 4x4
// stride-2 layers where it
// measured faster the Winograd form on the input's polyphase components
// (conv2d_winograd_s2, its filters made per task from the weights),
// for heads of at most 4 output channels the dot kernels (conv2d_narrow), or for thin
// stride-1 layers (1-4 input channels to 8 or more, or up to 64 to 8-16) the
// output-pixel lanes (conv2d_thin);
// groups = Cin: conv2d_depthwise; otherwise conv2d_grouped.
// A fused input map (a nearest Resize and a reflect/edge/wrap Pad folded in by the
// converter) becomes per-axis index tables for the input's size, which every forward
// kernel reads through; the backward gathers the map once into scratch, runs the
// ordinary backward on it and folds dX back onto the input.
#include <vector>

#include "engine/ops/half_route.h"
#include "engine/ops/op_def.h"
#include "engine/ops/op_kernel_util.h"
#include "engine/ops/op_text.h"
#include "engine/ops/op_validator.h"
#include "kernels_cpu/conv2d/conv2d_backward.h"
#include "kernels_cpu/conv2d/conv2d_grouped.h"
#include "kernels_cpu/conv2d/conv2d_input_map.h"
#include "kernels_cpu/conv2d/conv2d_narrow.h"
#include "kernels_cpu/conv2d/conv2d_thin.h"
#include "kernels_cpu/conv2d/conv2d_trimmed.h"
#include "kernels_cpu/conv2d/conv2d_winograd.h"
#include "kernels_cpu/conv2d/conv2d_winograd_f6.h"
#include "kernels_cpu/conv2d/conv2d_winograd_s2.h"

namespace edgegan {
namespace {

constexpr int64_t kMaxUpsample = 64;


class Conv2DKernel final : public OpKernel {
 public:
  Conv2DKernel(const OpDef& def, const KernelArgs& a, const schema::Conv2D& op)
      : overflow_(def, a.op), input_(op.input()), output_(op.output()), residual_(op.residual()), shape_(conv2d_shape(a, op)), groups_(op.groups()), weights_(a.weights.f32(op.weights())),
        weight_floats_(shape_.h.kernel * shape_.w.kernel * (shape_.in_channels / groups_) * shape_.out_channels),
        epilogue_(a.epilogue(op.epilogue())),
        path_(groups_ == 1 ? Path::kTrimmed : cpu::conv2d_is_depthwise(shape_, groups_) ? Path::kDepthwise : Path::kGrouped),
        workspace_floats_(path_ == Path::kTrimmed   ? cpu::conv2d_trimmed_workspace(shape_, a.threads)
                          : path_ == Path::kGrouped ? cpu::conv2d_grouped_workspace(shape_, groups_, a.threads)
                                                    : 0) {
    // Planned even without a tracker (the memory report's kernels never run).
    if (path_ == Path::kTrimmed) dense_ = dense_kernel(shape_, groups_);
    switch (dense_) {
      case Dense::kTrimmed:
        // fp16: the GEMM path of 16+ input channels widens its blocks' rows itself.
        halves_ = path_ == Path::kTrimmed && half_storage(a) && residual_ < 0 && !a.training && cpu::conv2d_trimmed_halves_applies(shape_, has_input_map(op));
        if (halves_) workspace_floats_ = cpu::conv2d_trimmed_halves_workspace(shape_, a.threads);
        // At neonfp16arith its 16+ channel GEMMs compute in halves on weights narrowed once here.
        if (halves_) half_weights_ = cpu::conv2d_trimmed_half_weights(shape_, weights_);
        break;
      case Dense::kWinograd:
        winograd_filters_.plan(a, cpu::conv2d_winograd_weight_floats(shape_), cpu::conv2d_winograd_keeps_filters(shape_), a.filter_copy_budget);
        // fp16: its transforms widen and narrow the halves themselves (a residual is left to the adapter).
        halves_ = half_storage(a) && residual_ < 0 && !a.training;
        workspace_floats_ = winograd_filters_.run_floats() + cpu::conv2d_winograd_workspace(shape_, a.threads, halves_);
        weights_changed();
        break;
      case Dense::kWinogradF6: workspace_floats_ = cpu::conv2d_winograd_f6_workspace(shape_, a.threads); break;
      case Dense::kWinogradS2: workspace_floats_ = cpu::conv2d_winograd_s2_workspace(shape_, a.threads); break;
      case Dense::kNarrow: workspace_floats_ = cpu::conv2d_narrow_workspace(shape_, a.threads); break;
      case Dense::kThin:
        // fp16: the thin kernel reads and writes halves itself (a residual is left to the adapter).
        halves_ = half_storage(a) && residual_ < 0 && !a.training;
        workspace_floats_ = cpu::conv2d_thin_workspace(shape_, a.threads, halves_);
        break;
    }
    if (has_input_map(op)) {  // its tables for this input's size, built once
      const TensorDesc& x = a.tensor(op.input());
      const auto mode = static_cast<cpu::PadMode>(op.input_pad_mode());
      map_rows_.resize(static_cast<size_t>(shape_.h.in));
      map_cols_.resize(static_cast<size_t>(shape_.w.in));
      cpu::conv_input_map_table(x.dims[1], map_axis_h(op), mode, map_rows_.data());
      cpu::conv_input_map_table(x.dims[2], map_axis_w(op), mode, map_cols_.data());
      map_ = {map_rows_.data(), map_cols_.data(), x.dims[1], x.dims[2]};
    }
    if (!a.training) return;
    if (path_ == Path::kTrimmed) {
      input_gradient_ = cpu::plan_conv2d_input_gradient(shape_);  // its geometry, once
      weights_workspace_floats_ = cpu::conv2d_backward_weights_workspace(shape_, a.threads);
      input_workspace_floats_ = cpu::conv2d_backward_input_workspace(shape_, a.threads);
    } else if (path_ == Path::kGrouped) {
      input_gradient_ = cpu::plan_conv2d_input_gradient(cpu::conv2d_group_shape(shape_, groups_));  // one group's, once
      input_workspace_floats_ = cpu::conv2d_grouped_backward_workspace(shape_, groups_, a.threads);
    }
    scratch_.take(weight_floats_);        // dW
    scratch_.take(shape_.out_channels);   // db
    scratch_.take(std::max(weights_workspace_floats_, input_workspace_floats_));
    if (a.accumulates(0) && !mapped()) scratch_.take(input_floats());  // a map's fold adds into dX itself
    if (mapped()) {
      scratch_.take(input_floats());  // the map, gathered
      scratch_.take(input_floats());  // its gradient
    }
  }
  const char* kernel_name() const override {
    if (path_ != Path::kTrimmed) return path_ == Path::kDepthwise ? "conv2d_depthwise" : "conv2d_grouped";
    switch (dense_) {
      case Dense::kWinogradF6: return "conv2d_winograd_f6";
      case Dense::kWinogradS2: return "conv2d_winograd_s2";
      case Dense::kNarrow: return "conv2d_narrow";
      case Dense::kThin: return halves_ ? "conv2d_thin_f16" : "conv2d_thin";
      case Dense::kWinograd: return halves_ ? "conv2d_winograd_f16" : "conv2d_winograd";
      case Dense::kTrimmed: break;
    }
    return halves_ ? "conv2d_trimmed_f16" : "conv2d_trimmed";
  }
  uint64_t repacked_weight_bytes() const override {
    return dense_ == Dense::kWinograd ? winograd_filters_.kept_bytes() : half_weights_.size() * sizeof(uint16_t);
  }
  // The transformed filters follow the weights (a trainer's step changes them).
  void weights_changed() override {
    if (winograd_filters_.kept()) cpu::pack_conv2d_winograd_weights(shape_, weights_, winograd_filters_.kept());
  }
  uint64_t macs() const override { return conv2d_macs(shape_) / static_cast<uint64_t>(groups_); }
  uint64_t workspace_bytes() const override { return static_cast<uint64_t>(workspace_floats_) * 4; }
  bool stores_halves() const override { return halves_; }
  void check_run() override { overflow_.check(); }
  void run(const RunContext& ctx) override {
    float* ws = reinterpret_cast<float*>(ctx.workspace);
    const cpu::ConvInputMap* map = mapped() ? &map_ : nullptr;
    if (halves_) {
      overflow_.clear();
      const auto* x = reinterpret_cast<const uint16_t*>((*ctx.tensors)[static_cast<size_t>(input_)]);
      auto* y = reinterpret_cast<uint16_t*>((*ctx.tensors)[static_cast<size_t>(output_)]);
      if (dense_ == Dense::kThin) return overflow_.add(cpu::conv2d_thin_halves(shape_, weights_, x, y, epilogue_, ctx.threads, ws, map));
      if (dense_ == Dense::kWinograd) {
        const float* filters = winograd_filters_.kept();
        if (winograd_filters_.made_per_run()) cpu::pack_conv2d_winograd_weights(shape_, weights_, ws, ctx.threads), filters = ws;
        return overflow_.add(cpu::conv2d_winograd_halves(shape_, filters, x, y, epilogue_, ctx.threads, ws + winograd_filters_.run_floats(), map));
      }
      return overflow_.add(cpu::conv2d_trimmed_halves(shape_, weights_, x, y, epilogue_, ctx.threads, ws, map,
                                                      half_weights_.empty() ? nullptr : half_weights_.data()));
    }
    cpu::Epilogue ep = epilogue_;
    if (residual_ >= 0) ep.residual = ctx.f32(residual_);
    switch (path_) {
      case Path::kTrimmed: run_dense(ctx, ep, ws, map); break;
      case Path::kDepthwise: cpu::conv2d_depthwise(shape_, weights_, ctx.f32(input_), ctx.f32(output_), ep, ctx.threads, map); break;
      case Path::kGrouped: cpu::conv2d_grouped(shape_, groups_, weights_, ctx.f32(input_), ctx.f32(output_), ep, ctx.threads, ws, map); break;
    }
  }
  void run_dense(const RunContext& ctx, const cpu::Epilogue& ep, float* ws, const cpu::ConvInputMap* map) const {
    const float* x = ctx.f32(input_);
    float* y = ctx.f32(output_);
    switch (dense_) {
      case Dense::kWinograd: {
        const float* filters = winograd_filters_.kept();
        if (winograd_filters_.made_per_run()) cpu::pack_conv2d_winograd_weights(shape_, weights_, ws, ctx.threads), filters = ws;
        return cpu::conv2d_winograd(shape_, filters, x, y, ep, ctx.threads, ws + winograd_filters_.run_floats(), map);
      }
      case Dense::kWinogradF6: return cpu::conv2d_winograd_f6(shape_, weights_, x, y, ep, ctx.threads, ws, map);
      case Dense::kWinogradS2: return cpu::conv2d_winograd_s2(shape_, weights_, x, y, ep, ctx.threads, ws, map);
      case Dense::kNarrow: return cpu::conv2d_narrow(shape_, weights_, x, y, ep, ctx.threads, ws, map);
      case Dense::kThin: return cpu::conv2d_thin(shape_, weights_, x, y, ep, ctx.threads, ws, map);
      case Dense::kTrimmed: return cpu::conv2d_trimmed(shape_, weights_, x, y, ep, ctx.threads, ws, map);
    }
  }
  uint64_t backward_workspace_bytes() const override { return scratch_.bytes(); }
  void backward(const BackwardContext& b) override {
    const int64_t pixels = shape_.batch * shape_.h.out * shape_.w.out;
    float* g = b.grad(output_);
    const bool params = b.wants_parameters();
    // A fused PRelu's slope gradient (slot 2) comes with its activation gradient.
    cpu::epilogue_activation_backward(pixels, shape_.out_channels, b.ctx.f32(output_), g, epilogue_, params ? b.parameter_gradient(2) : nullptr);
    ScratchLayout scratch(b.ctx.workspace);
    float* dw = scratch.take(weight_floats_);
    float* db = scratch.take(shape_.out_channels);
    const int64_t kernel_scratch_floats = std::max(weights_workspace_floats_, input_workspace_floats_);
    float* kernel_scratch = scratch.take(kernel_scratch_floats);
    if (params && b.parameter_gradient(1)) {
      cpu::bias_backward(pixels, shape_.out_channels, g, db);
      add_into(b.parameter_gradient(1), db, shape_.out_channels);
    }
    float* accumulate_scratch = b.accumulates(0) && !mapped() ? scratch.take(input_floats()) : nullptr;
    // x as the convolution saw it: the input, or its map gathered into scratch.
    const float* x = b.ctx.f32(input_);
    float* map_gradient = nullptr;
    if (mapped()) {
      float* gathered = scratch.take(input_floats());
      map_gradient = scratch.take(input_floats());
      cpu::conv_input_map_gather(shape_.batch, shape_.h.in, shape_.w.in, shape_.in_channels, map_, x, gathered, b.ctx.threads);
      x = gathered;
    }
    float* dx = nullptr;
    if (b.wants(0)) dx = mapped() ? map_gradient : input_gradient_target(b, input_, 0, accumulate_scratch);
    switch (path_) {
      case Path::kTrimmed:
        if (params) cpu::conv2d_backward_weights(shape_, x, g, dw, b.ctx.threads, kernel_scratch);
        // From the current weights (they change every step): their transposed view is rebuilt in the scratch.
        if (dx) cpu::conv2d_backward_input(input_gradient_, weights_, g, dx, kernel_scratch, input_workspace_floats_, b.ctx.threads);
        break;
      case Path::kDepthwise:
        if (params) cpu::conv2d_depthwise_backward_weights(shape_, x, g, dw, b.ctx.threads);
        if (dx) cpu::conv2d_depthwise_backward_input(shape_, weights_, g, dx, b.ctx.threads);
        break;
      case Path::kGrouped:
        cpu::conv2d_grouped_backward(shape_, groups_, input_gradient_, weights_, x, g, dx, params ? dw : nullptr,
                                     kernel_scratch, kernel_scratch_floats, b.ctx.threads);
        break;
    }
    if (params) add_into(b.parameter_gradient(0), dw, weight_floats_);
    if (dx && mapped())
      cpu::conv_input_map_fold(shape_.batch, shape_.h.in, shape_.w.in, shape_.in_channels, map_, dx, b.grad(input_), b.accumulates(0),
                               b.ctx.threads);
    else if (dx) finish_input_gradient(b, input_, 0, dx, input_floats());
    // No activation with a residual: g is still dy, the residual's gradient.
    if (residual_ >= 0) residual_gradient(b, residual_, 1, g, pixels * shape_.out_channels);
  }

 private:
  enum class Path { kTrimmed, kDepthwise, kGrouped };
  // groups = 1: which forward kernel runs (the backward is conv2d_backward's for all).
  enum class Dense { kTrimmed, kWinograd, kWinogradF6, kWinogradS2, kNarrow, kThin };
  // The form that measured faster for the layer; each *_pays / *_applies rule is the
  // kernel's own, and no two of the Winograd rules take the same layer.
  static Dense dense_kernel(const cpu::ConvShape& s, int64_t groups) {
    if (cpu::conv2d_winograd_pays(s, groups)) return Dense::kWinograd;        // 3x3 s1, filters of the kept size
    if (cpu::conv2d_winograd_f6_pays(s, groups)) return Dense::kWinogradF6;   // 3x3 s1, wider filters
    if (cpu::conv2d_winograd_s2_pays(s, groups)) return Dense::kWinogradS2;   // 4x4 s2
    if (cpu::conv2d_narrow_applies(s, groups)) return Dense::kNarrow;         // at most 4 outputs
    // Thin layers where the Winograd forms do not pay (measured against conv2d_trimmed only).
    if (cpu::conv2d_thin_applies(s, groups)) return Dense::kThin;             // k3-9 s1: 1-4 inputs to 8+, or 8-16 outputs
    return Dense::kTrimmed;
  }
  bool mapped() const { return !map_rows_.empty(); }
  // The map the convolution sees (with a fused input map: its gathered size).
  int64_t input_floats() const { return shape_.batch * shape_.h.in * shape_.w.in * shape_.in_channels; }
  HalfOverflow overflow_;  // the fp16 route's output past the half range
  int input_, output_, residual_;  // residual_: -1 for none
  cpu::ConvShape shape_;
  int64_t groups_;
  const float* weights_;
  int64_t weight_floats_;
  cpu::Epilogue epilogue_;
  Path path_;
  int64_t workspace_floats_;  // forward: the few-channel path's gathered rows, the grouped path's group copies, Winograd's windows, the narrow path's rows
  Dense dense_ = Dense::kTrimmed;  // the groups = 1 forward kernel
  bool halves_ = false;  // an fp16 session's native route (conv2d_thin_halves, conv2d_trimmed_halves)
  std::vector<uint16_t> half_weights_;  // conv2d_trimmed_halves' weights for half arithmetic (neonfp16arith), else empty
  TransformedFilters winograd_filters_;  // 36 x Cin x Cout
  // Training.
  cpu::ConvInputGradient input_gradient_;
  int64_t weights_workspace_floats_ = 0, input_workspace_floats_ = 0;
  ScratchLayout scratch_;  // sizes only
  // The fused input map, if any (its tables copied out of the file).
  std::vector<int32_t> map_rows_, map_cols_;
  cpu::ConvInputMap map_;
};

// The (height, width) the convolution sees: its input's, or its fused input map's, whose
// factors, pads and mode must be in range (a constant mode cannot pad: it has no index
// to read).
std::pair<int64_t, int64_t> check_input_map(const schema::Conv2D& op, const TensorDesc& x, OpValidator& v) {
  if (!has_input_map(op)) return {x.dims[1], x.dims[2]};
  v.check_range(op.input_upsample_h(), 1, kMaxUpsample, "input_upsample_h");
  v.check_range(op.input_upsample_w(), 1, kMaxUpsample, "input_upsample_w");
  for (int p : {op.input_pad_top(), op.input_pad_left(), op.input_pad_bottom(), op.input_pad_right()}) v.check_range(p, 0, kMaxPad, "input_pad");
  const schema::PadMode mode = op.input_pad_mode();
  if (mode < schema::PadMode_MIN || mode > schema::PadMode_MAX) v.fail("input_pad_mode " + std::to_string(static_cast<int>(mode)) + " is unknown");
  const cpu::InputMapAxis h = map_axis_h(op), w = map_axis_w(op);
  if (mode == schema::PadMode_Constant && (h.pad_begin || h.pad_end || w.pad_begin || w.pad_end))
    v.fail("input_pad_* with input_pad_mode Constant (a constant border belongs in the convolution's own pads)");
  const int64_t in_h = h.length(x.dims[1]), in_w = w.length(x.dims[2]);
  if (in_h > kMaxDim || in_w > kMaxDim) v.fail("the fused input map (" + std::to_string(in_h) + "x" + std::to_string(in_w) + ") is too large");
  return {in_h, in_w};
}

class Conv2DDef final : public OpDef {
 public:
  const char* name() const override { return "Conv2D"; }
  std::vector<int> inputs(const schema::Op& o) const override {
    const auto& op = *o.kind_as_Conv2D();
    if (op.residual() >= 0) return {op.input(), op.residual()};
    return {op.input()};
  }
  int output(const schema::Op& op) const override { return op.kind_as_Conv2D()->output(); }
  void validate(const schema::Op& o, OpValidator& v) const override {
    const auto& op = *o.kind_as_Conv2D();
    const TensorDesc& x = v.check_conv_params(op, 0);
    const auto [in_h, in_w] = check_input_map(op, x, v);
    const int64_t oh = cpu::conv_output_length(in_h, op.kernel_h(), op.stride_h(), op.dilation_h(), op.pad_top(), op.pad_bottom());
    const int64_t ow = cpu::conv_output_length(in_w, op.kernel_w(), op.stride_w(), op.dilation_w(), op.pad_left(), op.pad_right());
    if (oh < 1 || ow < 1) v.fail("the kernel does not fit the padded input");
    const TensorDesc* residual = v.use_residual(op.residual());
    TensorDesc& y = v.define_output(op.output(), {-1, oh, ow, op.out_channels()});
    v.expect_float(y);
    if (y.layout != Layout::kNHWC) v.fail("output must be NHWC");
    const int groups = op.groups();
    if (groups < 1 || groups > op.in_channels()) v.fail("groups " + std::to_string(groups) + " is out of range (1 to in_channels)");
    if (op.in_channels() % groups != 0 || op.out_channels() % groups != 0)
      v.fail("groups " + std::to_string(groups) + " does not divide in_channels " + std::to_string(op.in_channels()) + " and out_channels " +
             std::to_string(op.out_channels()));
    v.expect_buffer(op.weights(), static_cast<uint64_t>(op.kernel_h()) * op.kernel_w() * (op.in_channels() / groups) * op.out_channels(),
                    "weights", false);
    v.check_epilogue(op.epilogue(), op.out_channels(), true);
    v.check_residual(residual, y, op.epilogue() ? op.epilogue()->activation() : schema::Activation_None);
  }
  void describe(const Model::Impl& m, const schema::Op& o, OpInfo& info) const override {
    const auto& c = *o.kind_as_Conv2D();
    info.attributes = conv_text(c) + residual_text(m, c.residual());
    if (has_input_map(c)) {
      const TensorDesc& x = m.tensors[static_cast<size_t>(c.input())];
      const cpu::InputMapAxis h = map_axis_h(c), w = map_axis_w(c);
      auto os = text_stream();
      os << " reads " << x.dims[1] << "x" << x.dims[2] << " through a fused input map";
      if (h.factor != 1 || w.factor != 1) os << ": nearest x" << h.factor << "x" << w.factor;
      if (h.pad_begin || h.pad_end || w.pad_begin || w.pad_end)
        os << (h.factor != 1 || w.factor != 1 ? ", then " : ": ") << EnumNamePadMode(c.input_pad_mode()) << " pads(t,l,b,r) "
           << h.pad_begin << "," << w.pad_begin << "," << h.pad_end << "," << w.pad_end;
      os << " -> " << h.length(x.dims[1]) << "x" << w.length(x.dims[2]);
      info.attributes += os.str();
    }
    info.weight_bytes = m.buffer_bytes(c.weights()) + (c.epilogue() ? m.buffer_bytes(c.epilogue()->bias()) : 0);
  }
  std::vector<ParameterSlot> parameters(const schema::Op& o) const override {
    const auto& c = *o.kind_as_Conv2D();
    return {{"weights", c.weights()}, {"bias", c.epilogue() ? c.epilogue()->bias() : 0u}, {"slope", c.epilogue() ? c.epilogue()->slope() : 0u}};
  }
  std::unique_ptr<OpKernel> create_cpu_kernel(const KernelArgs& a) const override {
    return std::make_unique<Conv2DKernel>(*this, a, *a.op.kind_as_Conv2D());
  }
};

}  // namespace

template <>
const OpDef& op_definition<schema::OpKind_Conv2D>() {
  static const Conv2DDef def;
  return def;
}

}  // namespace edgegan
