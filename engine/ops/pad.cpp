// Pad: spatial padding (constant, reflect, edge, wrap) of an NHWC map; negative pads crop.
#include <algorithm>

#include "engine/ops/op_def.h"
#include "engine/ops/op_kernel_util.h"
#include "engine/ops/op_text.h"
#include "engine/ops/op_validator.h"
#include "engine/ops/pad_geometry.h"
#include "kernels_cpu/pad/pad.h"

namespace edgegan {
namespace {

static_assert(static_cast<int>(schema::PadMode_Constant) == static_cast<int>(cpu::PadMode::kConstant) &&
                  static_cast<int>(schema::PadMode_Reflect) == static_cast<int>(cpu::PadMode::kReflect) &&
                  static_cast<int>(schema::PadMode_Edge) == static_cast<int>(cpu::PadMode::kEdge) &&
                  static_cast<int>(schema::PadMode_Wrap) == static_cast<int>(cpu::PadMode::kWrap),
              "schema::PadMode and cpu::PadMode number the modes alike");

cpu::PadShape pad_shape(const schema::Pad& op, const KernelArgs& a) {
  const TensorDesc& x = a.tensor(op.input());
  const PadGeometry g = pad_geometry(op, x.dims, op.size_of() >= 0 ? a.tensor(op.size_of()).dims : std::vector<int64_t>{});
  cpu::PadShape s;
  s.batch = a.batch;
  s.channels = x.dims[3];
  s.h = g.h;
  s.w = g.w;
  s.mode = static_cast<cpu::PadMode>(op.mode());
  s.value = op.value();
  return s;
}

class PadKernel final : public OpKernel {
 public:
  PadKernel(const KernelArgs& a, const schema::Pad& op)
      : input_(op.input()), output_(op.output()), shape_(pad_shape(op, a)) {}
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
    v.check_range(op.align(), 0, kMaxPad, "align");
    v.check_range(op.size_scale(), 1, kMaxStride, "size_scale");
    std::vector<int64_t> like;
    if (op.size_of() != -1) {
      const TensorDesc& t = v.use(op.size_of(), "size_of");
      if (t.layout != Layout::kNHWC) v.fail("size_of tensor '" + t.name + "' is not an NHWC map");
      if (op.align() != 0) v.fail("align and size_of are both set");
      like = t.dims;
    }
    const PadGeometry g = pad_geometry(op, x.dims, like);
    for (int64_t p : {g.h.pad_end, g.w.pad_end})
      if (p < -kMaxPad || p > kMaxPad) v.fail("a far pad of " + std::to_string(p) + " (from the planned size) is out of range");
    const int64_t h = g.h.out(), w = g.w.out();
    // The cropped source the border is filled from must keep at least one pixel.
    if (g.h.hi() - g.h.lo() < 1 || g.w.hi() - g.w.lo() < 1) v.fail("negative pads crop all of input '" + x.name + "' " + dims_text(x.dims));
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
    if (a.align() >= 2) attrs << " far sides grown to multiples of " << a.align();
    if (a.size_of() >= 0) attrs << " far sides to " << a.size_scale() << " x the size of tensor " << a.size_of();
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
