// Pool: average or max pooling of an NHWC map (AveragePool, MaxPool and the global pools).
#include "engine/ops/op_def.h"
#include "engine/ops/op_kernel_util.h"
#include "engine/ops/op_text.h"
#include "engine/ops/op_validator.h"
#include "kernels_cpu/pool/pool.h"

namespace edgegan {
namespace {

cpu::PoolShape pool_shape(const KernelArgs& a, const schema::Pool& op) {
  const TensorDesc& x = a.tensor(op.input());
  const TensorDesc& y = a.tensor(op.output());
  cpu::PoolShape s;
  s.batch = a.batch;
  s.channels = op.channels();
  s.h = {x.dims[1], op.kernel_h(), op.stride_h(), op.dilation_h(), op.pad_top(), op.pad_bottom(), y.dims[1]};
  s.w = {x.dims[2], op.kernel_w(), op.stride_w(), op.dilation_w(), op.pad_left(), op.pad_right(), y.dims[2]};
  return s;
}

class PoolKernel final : public OpKernel {
 public:
  PoolKernel(const KernelArgs& a, const schema::Pool& op)
      : input_(op.input()), output_(op.output()), shape_(pool_shape(a, op)),
        kind_(op.kind() == schema::PoolKind_Max ? cpu::PoolKind::kMax : cpu::PoolKind::kAverage), include_pad_(op.count_include_pad()) {
    if (a.accumulates(0)) scratch_.take(input_floats());
  }
  const char* kernel_name() const override { return kind_ == cpu::PoolKind::kMax ? "pool_max" : "pool_average"; }
  void run(const RunContext& ctx) override { cpu::pool(shape_, kind_, include_pad_, ctx.f32(input_), ctx.f32(output_), ctx.threads); }
  uint64_t backward_workspace_bytes() const override { return scratch_.bytes(); }
  void backward(const BackwardContext& b) override {
    if (!b.wants(0)) return;
    ScratchLayout scratch(b.ctx.workspace);
    float* dx = input_gradient_target(b, input_, 0, b.accumulates(0) ? scratch.take(input_floats()) : nullptr);
    cpu::pool_backward(shape_, kind_, include_pad_, b.ctx.f32(input_), b.grad(output_), dx, b.ctx.threads);
    finish_input_gradient(b, input_, 0, dx, input_floats());
  }

 private:
  int64_t input_floats() const { return shape_.batch * shape_.h.in * shape_.w.in * shape_.channels; }
  int input_, output_;
  cpu::PoolShape shape_;
  cpu::PoolKind kind_;
  bool include_pad_;
  ScratchLayout scratch_;  // sizes only
};

class PoolDef final : public OpDef {
 public:
  const char* name() const override { return "Pool"; }
  std::vector<int> inputs(const schema::Op& op) const override { return {op.kind_as_Pool()->input()}; }
  int output(const schema::Op& op) const override { return op.kind_as_Pool()->output(); }
  void validate(const schema::Op& o, OpValidator& v) const override {
    const auto& op = *o.kind_as_Pool();
    const TensorDesc& x = v.use(op.input(), "input");
    v.expect_float(x);
    if (x.layout != Layout::kNHWC) v.fail("input must be an NHWC map");
    if (op.kind() != schema::PoolKind_Average && op.kind() != schema::PoolKind_Max) v.fail("unknown pool kind " + std::to_string(static_cast<int>(op.kind())));
    if (op.channels() != x.dims[3]) v.fail("channels = " + std::to_string(op.channels()) + " does not match input '" + x.name + "' " + dims_text(x.dims));
    // A global pool's kernel is the whole map, so kernels may be as large as a dimension.
    // Its window is written as the map's size, so it cannot follow a new input size.
    if (v.resizing()) {
      const std::vector<int64_t>& file_x = v.file_dims(op.input());
      if (file_x[1] == op.kernel_h() && file_x[2] == op.kernel_w() && (file_x[1] != x.dims[1] || file_x[2] != x.dims[2]))
        v.fail("a global pool over the whole " + std::to_string(file_x[1]) + "x" + std::to_string(file_x[2]) + " map cannot follow a new input size");
    }
    v.check_range(op.kernel_h(), 1, kMaxDim, "kernel_h");
    v.check_range(op.kernel_w(), 1, kMaxDim, "kernel_w");
    v.check_range(op.stride_h(), 1, kMaxStride, "stride_h");
    v.check_range(op.stride_w(), 1, kMaxStride, "stride_w");
    v.check_range(op.dilation_h(), 1, kMaxDilation, "dilation_h");
    v.check_range(op.dilation_w(), 1, kMaxDilation, "dilation_w");
    if (op.kind() == schema::PoolKind_Average && (op.dilation_h() != 1 || op.dilation_w() != 1)) v.fail("an average pool's dilations must be 1");
    const int64_t extent_h = op.dilation_h() * (int64_t{op.kernel_h()} - 1) + 1, extent_w = op.dilation_w() * (int64_t{op.kernel_w()} - 1) + 1;
    for (int p : {op.pad_top(), op.pad_bottom()})
      if (p < 0 || p >= extent_h) v.fail("pad " + std::to_string(p) + " must be in [0, the window's height)");
    for (int p : {op.pad_left(), op.pad_right()})
      if (p < 0 || p >= extent_w) v.fail("pad " + std::to_string(p) + " must be in [0, the window's width)");
    const int64_t oh = cpu::pool_output_length(x.dims[1], op.kernel_h(), op.stride_h(), op.dilation_h(), op.pad_top(), op.pad_bottom(), op.ceil_mode());
    const int64_t ow = cpu::pool_output_length(x.dims[2], op.kernel_w(), op.stride_w(), op.dilation_w(), op.pad_left(), op.pad_right(), op.ceil_mode());
    if (oh < 1 || ow < 1) v.fail("the window does not fit the padded input");
    TensorDesc& y = v.define_output(op.output(), {-1, oh, ow, x.dims[3]});
    v.expect_float(y);
    if (y.layout != Layout::kNHWC) v.fail("output must be NHWC");
  }
  void describe(const Model::Impl&, const schema::Op& o, OpInfo& info) const override {
    const auto& p = *o.kind_as_Pool();
    auto attrs = text_stream();
    attrs << (p.kind() == schema::PoolKind_Max ? "max " : "average ") << p.kernel_h() << "x" << p.kernel_w() << " /" << p.stride_h() << "x"
          << p.stride_w();
    if (p.dilation_h() != 1 || p.dilation_w() != 1) attrs << " dil " << p.dilation_h() << "x" << p.dilation_w();
    if (p.pad_top() || p.pad_left() || p.pad_bottom() || p.pad_right())
      attrs << " pad " << p.pad_top() << "," << p.pad_left() << "," << p.pad_bottom() << "," << p.pad_right();
    if (p.ceil_mode()) attrs << " ceil";
    if (p.count_include_pad()) attrs << " count_include_pad";
    info.attributes = attrs.str();
  }
  std::vector<ParameterSlot> parameters(const schema::Op&) const override { return {}; }
  std::unique_ptr<OpKernel> create_cpu_kernel(const KernelArgs& a) const override { return std::make_unique<PoolKernel>(a, *a.op.kind_as_Pool()); }
};

}  // namespace

template <>
const OpDef& op_definition<schema::OpKind_Pool>() {
  static const PoolDef def;
  return def;
}

}  // namespace edgegan
