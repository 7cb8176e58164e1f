// Pad: spatial padding (constant, reflect, edge, wrap) of an NHWC map; negative pads crop.
#include <algorithm>

#include "engine/ops/op_def.h"
#include "engine/ops/op_kernel_util.h"
#include "engine/ops/op_text.h"
#include "engine/ops/op_validator.h"
#include "kernels_cpu/pad/pad.h"

namespace edgegan {
namespace {

static_assert(static_cast<int>(schema::PadMode_Constant) == static_cast<int>(cpu::PadMode::kConstant) &&
                  static_cast<int>(schema::PadMode_Reflect) == static_cast<int>(cpu::PadMode::kReflect) &&
                  static_cast<int>(schema::PadMode_Edge) == static_cast<int>(cpu::PadMode::kEdge) &&
                  static_cast<int>(schema::PadMode_Wrap) == static_cast<int>(cpu::PadMode::kWrap),
              "schema::PadMode and cpu::PadMode number the modes alike");

cpu::PadShape pad_shape(const schema::Pad& op, const TensorDesc& x, int64_t batch) {
  cpu::PadShape s;
  s.batch = batch;
  s.channels = x.dims[3];
  s.h = {x.dims[1], op.pad_top(), op.pad_bottom()};
  s.w = {x.dims[2], op.pad_left(), op.pad_right()};
  s.mode = static_cast<cpu::PadMode>(op.mode());
  s.value = op.value();
  return s;
}

class PadKernel final : public OpKernel {
 public:
  PadKernel(const KernelArgs& a, const schema::Pad& op)
      : input_(op.input()), output_(op.output()), shape_(pad_shape(op, a.tensor(op.input()), a.batch)) {}
  const char* kernel_name() const override { return "pad"; }
  void run(const RunContext& ctx) override { cpu::pad(shape_, ctx.f32(input_), ctx.f32(output_), ctx.threads); }
  void backward(const BackwardContext& b) override {
    if (!b.wants(0)) return;
    cpu::pad_backward(shape_, b.grad(output_), b.grad(input_), b.accumulates(0), b.ctx.threads);
  }

 private:
  int input_, output_;
  cpu::PadShape shape_;
};

const char* mode_name(schema::PadMode m) {
  switch (m) {
    case schema::PadMode_Constant: return "constant";
    case schema::PadMode_Reflect: return "reflect";
    case schema::PadMode_Edge: return "edge";
    case schema::PadMode_Wrap: return "wrap";
  }
  return "?";
}

class PadDef final : public OpDef {
 public:
  const char* name() const override { return "Pad"; }
  std::vector<int> inputs(const schema::Op& op) const override { return {op.kind_as_Pad()->input()}; }
  int output(const schema::Op& op) const override { return op.kind_as_Pad()->output(); }
  void validate(const schema::Op& o, OpValidator& v) const override {
    const auto& op = *o.kind_as_Pad();
    const TensorDesc& x = v.use(op.input(), "input");
    v.expect_float(x);
    if (x.layout != Layout::kNHWC) v.fail("input must be an NHWC image tensor");
    v.check_range(op.mode(), schema::PadMode_MIN, schema::PadMode_MAX, "mode");
    for (int p : {op.pad_top(), op.pad_left(), op.pad_bottom(), op.pad_right()}) v.check_range(p, -kMaxPad, kMaxPad, "pad");
    const int64_t h = x.dims[1] + op.pad_top() + op.pad_bottom(), w = x.dims[2] + op.pad_left() + op.pad_right();
    // The cropped source the border is filled from must keep at least one pixel.
    if (x.dims[1] + std::min(op.pad_top(), 0) + std::min(op.pad_bottom(), 0) < 1 ||
        x.dims[2] + std::min(op.pad_left(), 0) + std::min(op.pad_right(), 0) < 1)
      v.fail("negative pads crop all of input '" + x.name + "' " + dims_text(x.dims));
    if (h < 1 || w < 1 || h > kMaxDim || w > kMaxDim) v.fail("padded size " + std::to_string(h) + "x" + std::to_string(w) + " is out of range");
    TensorDesc& y = v.define_output(op.output(), {-1, h, w, x.dims[3]});
    v.expect_float(y);
    if (y.layout != Layout::kNHWC) v.fail("output must be an NHWC image tensor");
  }
  void describe(const Model::Impl&, const schema::Op& o, OpInfo& info) const override {
    const auto& a = *o.kind_as_Pad();
    auto attrs = text_stream();
    attrs << mode_name(a.mode()) << " pads(t,l,b,r) " << a.pad_top() << "," << a.pad_left() << "," << a.pad_bottom() << "," << a.pad_right();
    if (a.mode() == schema::PadMode_Constant) attrs << " value " << a.value();
    info.attributes = attrs.str();
  }
  std::vector<ParameterSlot> parameters(const schema::Op&) const override { return {}; }
  std::unique_ptr<OpKernel> create_cpu_kernel(const KernelArgs& a) const override { return std::make_unique<PadKernel>(a, *a.op.kind_as_Pad()); }
};

}  // namespace

template <>
const OpDef& op_definition<schema::OpKind_Pad>() {
  static const PadDef def;
  return def;
}

}  // namespace edgegan
