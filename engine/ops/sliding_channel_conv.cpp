// SlidingChannelConv (DSXplore's SCC): output channel o convolves the `window` input
// channels (starts[o mod period] + j) mod Cin, read in place (no channel stack);
// weights [Cout][kh][kw][window], bias and activation in the epilogue.
#include <limits>

#include "engine/ops/op_def.h"
#include "engine/ops/op_kernel_util.h"
#include "engine/ops/op_text.h"
#include "engine/ops/op_validator.h"
#include "engine/text_stream.h"
#include "kernels_cpu/sliding_channel_conv/sliding_channel_conv.h"

namespace edgegan {
namespace {

cpu::SlidingChannelPlan plan_of(const KernelArgs& a, const schema::SlidingChannelConv& op) {
  const TensorDesc& x = a.tensor(op.input());
  const TensorDesc& y = a.tensor(op.output());
  const cpu::ConvShape shape{a.batch, op.in_channels(), op.out_channels(),
                             {x.dims[1], op.kernel_h(), op.stride_h(), op.dilation_h(), op.pad_top(), op.pad_bottom(), y.dims[1]},
                             {x.dims[2], op.kernel_w(), op.stride_w(), op.dilation_w(), op.pad_left(), op.pad_right(), y.dims[2]}};
  return cpu::plan_sliding_channel_conv(shape, op.window(), std::vector<int32_t>(op.starts()->begin(), op.starts()->end()));
}

class SlidingChannelConvKernel final : public OpKernel {
 public:
  SlidingChannelConvKernel(const KernelArgs& a, const schema::SlidingChannelConv& op)
      : input_(op.input()), output_(op.output()), plan_(plan_of(a, op)), weights_(a.weights.f32(op.weights())),
        weight_floats_(op.out_channels() * op.kernel_h() * op.kernel_w() * op.window()), epilogue_(a.epilogue(op.epilogue())),
        workspace_floats_(cpu::sliding_channel_conv_workspace(plan_, a.threads)) {
    if (!a.training) return;
    scratch_.take(weight_floats_);                                            // dW
    scratch_.take(plan_.shape.out_channels);                                  // db
    scratch_.take(cpu::sliding_channel_conv_backward_workspace(plan_, a.threads));  // dW rows / dX tiles, per thread
    if (a.accumulates(0)) scratch_.take(input_floats(a.batch));
  }
  const char* kernel_name() const override { return "sliding_channel_conv"; }
  uint64_t macs() const override {
    const cpu::ConvShape& s = plan_.shape;
    return static_cast<uint64_t>(cpu::saturating_product({s.batch, s.out_channels, plan_.window, static_cast<int64_t>(cpu::conv_useful_pairs(s.h)),
                                                          static_cast<int64_t>(cpu::conv_useful_pairs(s.w))}));
  }
  uint64_t workspace_bytes() const override { return static_cast<uint64_t>(workspace_floats_) * 4; }
  void run(const RunContext& ctx) override {
    cpu::sliding_channel_conv(plan_, ctx.batch, weights_, ctx.f32(input_), ctx.f32(output_), epilogue_, ctx.threads,
                              reinterpret_cast<float*>(ctx.workspace));
  }
  uint64_t backward_workspace_bytes() const override { return scratch_.bytes(); }
  void backward(const BackwardContext& b) override {
    const cpu::ConvShape& s = plan_.shape;
    const int64_t batch = b.ctx.batch;
    const int64_t pixels = batch * s.h.out * s.w.out;
    float* g = b.grad(output_);
    cpu::activation_backward(pixels * s.out_channels, b.ctx.f32(output_), g, epilogue_.activation, epilogue_.alpha, epilogue_.beta);
    ScratchLayout scratch(b.ctx.workspace);
    float* dw = scratch.take(weight_floats_);
    float* db = scratch.take(s.out_channels);
    float* tiles = scratch.take(cpu::sliding_channel_conv_backward_workspace(plan_, b.ctx.threads));
    if (b.wants_parameters()) {
      if (b.parameter_gradient(1)) {
        cpu::bias_backward(pixels, s.out_channels, g, db);
        add_into(b.parameter_gradient(1), db, s.out_channels);
      }
      cpu::sliding_channel_conv_backward_weights(plan_, batch, b.ctx.f32(input_), g, dw, b.ctx.threads, tiles);
      add_into(b.parameter_gradient(0), dw, weight_floats_);
    }
    if (b.wants(0)) {
      float* dx = input_gradient_target(b, input_, 0, b.accumulates(0) ? scratch.take(input_floats(batch)) : nullptr);
      cpu::sliding_channel_conv_backward_input(plan_, batch, weights_, g, dx, b.ctx.threads, tiles);
      finish_input_gradient(b, input_, 0, dx, input_floats(batch));
    }
  }

 private:
  int64_t input_floats(int64_t batch) const { return batch * plan_.shape.h.in * plan_.shape.w.in * plan_.shape.in_channels; }
  int input_, output_;
  cpu::SlidingChannelPlan plan_;
  const float* weights_;
  int64_t weight_floats_;
  cpu::Epilogue epilogue_;
  int64_t workspace_floats_;  // per-thread transposed input tiles (independent of Cout)
  ScratchLayout scratch_;     // training, sizes only
};

class SlidingChannelConvDef final : public OpDef {
 public:
  const char* name() const override { return "SlidingChannelConv"; }
  std::vector<int> inputs(const schema::Op& op) const override { return {op.kind_as_SlidingChannelConv()->input()}; }
  int output(const schema::Op& op) const override { return op.kind_as_SlidingChannelConv()->output(); }
  void validate(const schema::Op& o, OpValidator& v) const override {
    const auto& op = *o.kind_as_SlidingChannelConv();
    const TensorDesc& x = v.check_conv_params(op, 0);
    const int64_t cin = op.in_channels(), cout = op.out_channels();
    v.check_range(op.window(), 1, cin, "window");
    v.check_range(op.start_stride(), 1, cin, "start_stride");
    if (!op.starts()) v.fail("the window table 'starts' is missing");
    const int64_t period = cpu::sliding_channel_conv_period(cin, cout, op.start_stride());
    if (static_cast<int64_t>(op.starts()->size()) != period)
      v.fail("the window table has " + std::to_string(op.starts()->size()) + " starts, one period of start_stride " +
             std::to_string(op.start_stride()) + " over " + std::to_string(cin) + " channels is " + std::to_string(period));
    for (uint32_t p = 0; p < op.starts()->size(); ++p)
      if (op.starts()->Get(p) != static_cast<int64_t>(p) * op.start_stride() % cin)
        v.fail("window start " + std::to_string(p) + " is " + std::to_string(op.starts()->Get(p)) + ", not " + std::to_string(p) +
               " * start_stride mod in_channels");
    // The kernels' cover list holds period * window int32 entries.
    if (period * op.window() > std::numeric_limits<int32_t>::max()) v.fail("window table of " + std::to_string(period * op.window()) + " entries is too large");
    const int64_t oh = cpu::conv_output_length(x.dims[1], op.kernel_h(), op.stride_h(), op.dilation_h(), op.pad_top(), op.pad_bottom());
    const int64_t ow = cpu::conv_output_length(x.dims[2], op.kernel_w(), op.stride_w(), op.dilation_w(), op.pad_left(), op.pad_right());
    if (oh < 1 || ow < 1) v.fail("the kernel does not fit the padded input");
    TensorDesc& y = v.define_output(op.output(), {-1, oh, ow, cout});
    v.expect_float(y);
    if (y.layout != Layout::kNHWC) v.fail("output must be NHWC");
    const int64_t weights = v.checked_mul(v.checked_mul(cout, op.window()), v.checked_mul(op.kernel_h(), op.kernel_w()));
    v.expect_buffer(op.weights(), static_cast<uint64_t>(weights), "weights", false);
    v.check_epilogue(op.epilogue(), cout);
  }
  void describe(const Model::Impl& m, const schema::Op& o, OpInfo& info) const override {
    const auto& c = *o.kind_as_SlidingChannelConv();
    auto os = text_stream();
    os << "window " << c.window() << " start stride " << c.start_stride() << " period " << (c.starts() ? c.starts()->size() : 0) << " k"
       << c.kernel_h() << "x" << c.kernel_w() << " s" << c.stride_h() << "x" << c.stride_w() << " pads(t,l,b,r) " << c.pad_top() << ","
       << c.pad_left() << "," << c.pad_bottom() << "," << c.pad_right();
    if (c.dilation_h() != 1 || c.dilation_w() != 1) os << " dilation " << c.dilation_h() << "x" << c.dilation_w();
    os << epilogue_text(c.epilogue());
    info.attributes = os.str();
    info.weight_bytes = m.buffer_bytes(c.weights()) + (c.epilogue() ? m.buffer_bytes(c.epilogue()->bias()) : 0);
    // The channel stack [H][W][Cout * window] the composed (gather + grouped conv) form would write.
    const TensorDesc& x = m.tensors[static_cast<size_t>(c.input())];
    info.unmaterialised_bytes_per_sample = static_cast<uint64_t>(x.dims[1] * x.dims[2]) * static_cast<uint64_t>(c.out_channels()) *
                                           static_cast<uint64_t>(c.window()) * 4;
  }
  std::vector<ParameterSlot> parameters(const schema::Op& o) const override {
    const auto& c = *o.kind_as_SlidingChannelConv();
    return {{"weights", c.weights()}, {"bias", c.epilogue() ? c.epilogue()->bias() : 0u}};
  }
  std::unique_ptr<OpKernel> create_cpu_kernel(const KernelArgs& a) const override {
    return std::make_unique<SlidingChannelConvKernel>(a, *a.op.kind_as_SlidingChannelConv());
  }
};

}  // namespace

template <>
const OpDef& op_definition<schema::OpKind_SlidingChannelConv>() {
  static const SlidingChannelConvDef def;
  return def;
}

}  // namespace edgegan
