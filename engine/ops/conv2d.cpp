// Conv2D: NHWC convolution, weights [kh][kw][Cin/groups][Cout], bias and activation in the epilogue.
// groups = 1: conv2d_trimmed; groups = Cin: conv2d_depthwise; otherwise conv2d_grouped.
#include "engine/ops/op_def.h"
#include "engine/ops/op_kernel_util.h"
#include "engine/ops/op_text.h"
#include "engine/ops/op_validator.h"
#include "kernels_cpu/conv2d/conv2d_backward.h"
#include "kernels_cpu/conv2d/conv2d_grouped.h"
#include "kernels_cpu/conv2d/conv2d_trimmed.h"

namespace edgegan {
namespace {

class Conv2DKernel final : public OpKernel {
 public:
  Conv2DKernel(const KernelArgs& a, const schema::Conv2D& op)
      : input_(op.input()), output_(op.output()), shape_(a.conv_shape(op)), groups_(op.groups()), weights_(a.weights.f32(op.weights())),
        weight_floats_(shape_.h.kernel * shape_.w.kernel * (shape_.in_channels / groups_) * shape_.out_channels),
        epilogue_(a.epilogue(op.epilogue())),
        path_(groups_ == 1 ? Path::kTrimmed : cpu::conv2d_is_depthwise(shape_, groups_) ? Path::kDepthwise : Path::kGrouped),
        workspace_floats_(path_ == Path::kTrimmed   ? cpu::conv2d_trimmed_workspace(shape_, a.threads)
                          : path_ == Path::kGrouped ? cpu::conv2d_grouped_workspace(shape_, groups_, a.threads)
                                                    : 0) {
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
    if (a.accumulates(0)) scratch_.take(input_floats());
  }
  const char* kernel_name() const override {
    return path_ == Path::kTrimmed ? "conv2d_trimmed" : path_ == Path::kDepthwise ? "conv2d_depthwise" : "conv2d_grouped";
  }
  uint64_t macs() const override { return conv2d_macs(shape_) / static_cast<uint64_t>(groups_); }
  uint64_t workspace_bytes() const override { return static_cast<uint64_t>(workspace_floats_) * 4; }
  void run(const RunContext& ctx) override {
    float* ws = reinterpret_cast<float*>(ctx.workspace);
    switch (path_) {
      case Path::kTrimmed: cpu::conv2d_trimmed(shape_, weights_, ctx.f32(input_), ctx.f32(output_), epilogue_, ctx.threads, ws); break;
      case Path::kDepthwise: cpu::conv2d_depthwise(shape_, weights_, ctx.f32(input_), ctx.f32(output_), epilogue_, ctx.threads); break;
      case Path::kGrouped:
        cpu::conv2d_grouped(shape_, groups_, weights_, ctx.f32(input_), ctx.f32(output_), epilogue_, ctx.threads, ws);
        break;
    }
  }
  uint64_t backward_workspace_bytes() const override { return scratch_.bytes(); }
  void backward(const BackwardContext& b) override {
    const int64_t pixels = shape_.batch * shape_.h.out * shape_.w.out;
    float* g = b.grad(output_);
    cpu::activation_backward(pixels * shape_.out_channels, b.ctx.f32(output_), g, epilogue_.activation, epilogue_.alpha);
    ScratchLayout scratch(b.ctx.workspace);
    float* dw = scratch.take(weight_floats_);
    float* db = scratch.take(shape_.out_channels);
    const int64_t kernel_scratch_floats = std::max(weights_workspace_floats_, input_workspace_floats_);
    float* kernel_scratch = scratch.take(kernel_scratch_floats);
    const bool params = b.wants_parameters();
    if (params && b.parameter_gradient(1)) {
      cpu::bias_backward(pixels, shape_.out_channels, g, db);
      add_into(b.parameter_gradient(1), db, shape_.out_channels);
    }
    float* dx = nullptr;
    if (b.wants(0)) dx = input_gradient_target(b, input_, 0, b.accumulates(0) ? scratch.take(input_floats()) : nullptr);
    switch (path_) {
      case Path::kTrimmed:
        if (params) cpu::conv2d_backward_weights(shape_, b.ctx.f32(input_), g, dw, b.ctx.threads, kernel_scratch);
        // From the current weights (they change every step): their transposed view is rebuilt in the scratch.
        if (dx) cpu::conv2d_backward_input(input_gradient_, weights_, g, dx, kernel_scratch, input_workspace_floats_, b.ctx.threads);
        break;
      case Path::kDepthwise:
        if (params) cpu::conv2d_depthwise_backward_weights(shape_, b.ctx.f32(input_), g, dw, b.ctx.threads);
        if (dx) cpu::conv2d_depthwise_backward_input(shape_, weights_, g, dx, b.ctx.threads);
        break;
      case Path::kGrouped:
        cpu::conv2d_grouped_backward(shape_, groups_, input_gradient_, weights_, b.ctx.f32(input_), g, dx, params ? dw : nullptr,
                                     kernel_scratch, kernel_scratch_floats, b.ctx.threads);
        break;
    }
    if (params) add_into(b.parameter_gradient(0), dw, weight_floats_);
    if (dx) finish_input_gradient(b, input_, 0, dx, input_floats());
  }

 private:
  enum class Path { kTrimmed, kDepthwise, kGrouped };
  int64_t input_floats() const { return shape_.batch * shape_.h.in * shape_.w.in * shape_.in_channels; }
  int input_, output_;
  cpu::ConvShape shape_;
  int64_t groups_;
  const float* weights_;
  int64_t weight_floats_;
  cpu::Epilogue epilogue_;
  Path path_;
  int64_t workspace_floats_;  // forward: the few-channel path's gathered rows, the grouped path's group copies
  // Training.
  cpu::ConvInputGradient input_gradient_;
  int64_t weights_workspace_floats_ = 0, input_workspace_floats_ = 0;
  ScratchLayout scratch_;  // sizes only
};

class Conv2DDef final : public OpDef {
 public:
  const char* name() const override { return "Conv2D"; }
  std::vector<int> inputs(const schema::Op& op) const override { return {op.kind_as_Conv2D()->input()}; }
  int output(const schema::Op& op) const override { return op.kind_as_Conv2D()->output(); }
  void validate(const schema::Op& o, OpValidator& v) const override {
    const auto& op = *o.kind_as_Conv2D();
    const TensorDesc& x = v.check_conv_params(op, 0);
    const int64_t oh = cpu::conv_output_length(x.dims[1], op.kernel_h(), op.stride_h(), op.dilation_h(), op.pad_top(), op.pad_bottom());
    const int64_t ow = cpu::conv_output_length(x.dims[2], op.kernel_w(), op.stride_w(), op.dilation_w(), op.pad_left(), op.pad_right());
    if (oh < 1 || ow < 1) v.fail("the kernel does not fit the padded input");
    TensorDesc& y = v.define(op.output());
    v.expect_float(y);
    if (y.layout != Layout::kNHWC) v.fail("output must be NHWC");
    v.expect_dims(y, {-1, oh, ow, op.out_channels()}, "output");
    const int groups = op.groups();
    if (groups < 1 || groups > op.in_channels()) v.fail("groups " + std::to_string(groups) + " is out of range (1 to in_channels)");
    if (op.in_channels() % groups != 0 || op.out_channels() % groups != 0)
      v.fail("groups " + std::to_string(groups) + " does not divide in_channels " + std::to_string(op.in_channels()) + " and out_channels " +
             std::to_string(op.out_channels()));
    v.expect_buffer(op.weights(), static_cast<uint64_t>(op.kernel_h()) * op.kernel_w() * (op.in_channels() / groups) * op.out_channels(),
                    "weights", false);
    v.check_epilogue(op.epilogue(), op.out_channels());
  }
  void describe(const Model::Impl& m, const schema::Op& o, OpInfo& info) const override {
    const auto& c = *o.kind_as_Conv2D();
    info.attributes = conv_text(c);
    info.weight_bytes = m.buffer_bytes(c.weights()) + (c.epilogue() ? m.buffer_bytes(c.epilogue()->bias()) : 0);
  }
  std::vector<ParameterSlot> parameters(const schema::Op& o) const override {
    const auto& c = *o.kind_as_Conv2D();
    return {{"weights", c.weights()}, {"bias", c.epilogue() ? c.epilogue()->bias() : 0u}};
  }
  std::unique_ptr<OpKernel> create_cpu_kernel(const KernelArgs& a) const override {
    return std::make_unique<Conv2DKernel>(a, *a.op.kind_as_Conv2D());
  }
};

}  // namespace

template <>
const OpDef& op_definition<schema::OpKind_Conv2D>() {
  static const Conv2DDef def;
  return def;
}

}  // namespace edgegan
