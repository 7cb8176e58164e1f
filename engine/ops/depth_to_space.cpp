// DepthToSpace and its inverse (space_to_depth): channel blocks moved to and from
// b x b pixel blocks of NHWC maps (PixelShuffle / PixelUnshuffle).
#include "engine/ops/half_route.h"
#include "engine/ops/op_def.h"
#include "engine/ops/op_kernel_util.h"
#include "engine/ops/op_text.h"
#include "engine/ops/op_validator.h"
#include "kernels_cpu/depth_to_space/depth_to_space.h"

namespace edgegan {
namespace {

static_assert(static_cast<int>(schema::DepthToSpaceMode_DCR) == static_cast<int>(cpu::DepthToSpaceMode::kDCR) &&
                  static_cast<int>(schema::DepthToSpaceMode_CRD) == static_cast<int>(cpu::DepthToSpaceMode::kCRD),
              "schema::DepthToSpaceMode and cpu::DepthToSpaceMode number the modes alike");

class DepthToSpaceKernel final : public OpKernel {
 public:
  DepthToSpaceKernel(const KernelArgs& a, const schema::DepthToSpace& op)
      : input_(op.input()), output_(op.output()), to_space_(!op.space_to_depth()), halves_(half_storage(a)) {
    shape_ = depth_to_space_shape(a, op);
  }
  const char* kernel_name() const override {
    if (halves_) return to_space_ ? "depth_to_space_f16" : "space_to_depth_f16";
    return to_space_ ? "depth_to_space" : "space_to_depth";
  }
  // fp16: the halves moved as they are (a native route).
  bool stores_halves() const override { return halves_; }
  void run(const RunContext& ctx) override {
    if (halves_)
      cpu::depth_to_space_halves(shape_, to_space_, reinterpret_cast<const uint16_t*>(ctx.f32(input_)), reinterpret_cast<uint16_t*>(ctx.f32(output_)), ctx.threads);
    else
      cpu::depth_to_space(shape_, to_space_, ctx.f32(input_), ctx.f32(output_), false, ctx.threads);
  }
  void backward(const BackwardContext& b) override {
    if (!b.wants(0)) return;
    // A permutation: the gradient goes back by the inverse one.
    cpu::depth_to_space(shape_, !to_space_, b.grad(output_), b.grad(input_), b.accumulates(0), b.ctx.threads);
  }

 private:
  int input_, output_;
  bool to_space_, halves_;
  cpu::DepthToSpaceShape shape_;
};

class DepthToSpaceDef final : public OpDef {
 public:
  const char* name() const override { return "DepthToSpace"; }
  std::vector<int> inputs(const schema::Op& op) const override { return {op.kind_as_DepthToSpace()->input()}; }
  int output(const schema::Op& op) const override { return op.kind_as_DepthToSpace()->output(); }
  void validate(const schema::Op& o, OpValidator& v) const override {
    const auto& op = *o.kind_as_DepthToSpace();
    const TensorDesc& x = v.use(op.input(), "input");
    v.expect_float(x);
    if (x.layout != Layout::kNHWC) v.fail("input must be an NHWC image tensor");
    v.check_range(op.mode(), schema::DepthToSpaceMode_MIN, schema::DepthToSpaceMode_MAX, "mode");
    v.check_range(op.block(), 1, kMaxStride, "block");
    const int64_t b = op.block();
    std::vector<int64_t> want;
    if (op.space_to_depth()) {
      if (x.dims[1] % b != 0 || x.dims[2] % b != 0)
        v.fail("input '" + x.name + "' " + dims_text(x.dims) + " is not a whole number of " + std::to_string(b) + "x" + std::to_string(b) + " blocks");
      want = {-1, x.dims[1] / b, x.dims[2] / b, v.checked_mul(x.dims[3], b * b)};
      if (want[3] > kMaxDim) v.fail("output channels out of range");
    } else {
      if (x.dims[3] % (b * b) != 0)
        v.fail("input '" + x.name + "' has " + std::to_string(x.dims[3]) + " channels, not a multiple of block^2 = " + std::to_string(b * b));
      want = {-1, v.checked_mul(x.dims[1], b), v.checked_mul(x.dims[2], b), x.dims[3] / (b * b)};
      if (want[1] > kMaxDim || want[2] > kMaxDim) v.fail("output size out of range");
    }
    TensorDesc& y = v.define_output(op.output(), want);
    v.expect_float(y);
    if (y.layout != Layout::kNHWC) v.fail("output must be an NHWC image tensor");
  }
  void describe(const Model::Impl&, const schema::Op& o, OpInfo& info) const override {
    const auto& a = *o.kind_as_DepthToSpace();
    auto attrs = text_stream();
    attrs << (a.space_to_depth() ? "space_to_depth" : "depth_to_space") << " block " << a.block() << " "
          << (a.mode() == schema::DepthToSpaceMode_CRD ? "CRD" : "DCR");
    info.attributes = attrs.str();
  }
  std::vector<ParameterSlot> parameters(const schema::Op&) const override { return {}; }
  std::unique_ptr<OpKernel> create_cpu_kernel(const KernelArgs& a) const override {
    return std::make_unique<DepthToSpaceKernel>(a, *a.op.kind_as_DepthToSpace());
  }
};

}  // namespace

template <>
const OpDef& op_definition<schema::OpKind_DepthToSpace>() {
  static const DepthToSpaceDef def;
  return def;
}

}  // namespace edgegan
