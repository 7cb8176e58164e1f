// GridSample: an NHWC map sampled at the points of a run-time grid (ONNX GridSample,
// DySample's up-sampling); no weights. Backward: the input's and the grid's gradients.
#include "engine/ops/op_def.h"
#include "engine/ops/op_kernel_util.h"
#include "engine/ops/op_text.h"
#include "engine/ops/op_validator.h"
#include "kernels_cpu/grid_sample/grid_sample.h"

namespace edgegan {
namespace {

static_assert(static_cast<int>(schema::GridSampleMode_Bicubic) == static_cast<int>(kernels::GridSampleMode::kBicubic) &&
                  static_cast<int>(schema::GridSampleMode_Nearest) == static_cast<int>(kernels::GridSampleMode::kNearest) &&
                  static_cast<int>(schema::GridSamplePadding_Reflection) == static_cast<int>(kernels::GridSamplePadding::kReflection) &&
                  static_cast<int>(schema::GridSamplePadding_Border) == static_cast<int>(kernels::GridSamplePadding::kBorder),
              "the schema's and the kernels' GridSample enums number the modes alike");

class GridSampleKernel final : public OpKernel {
 public:
  GridSampleKernel(const KernelArgs& a, const schema::GridSample& op) : input_(op.input()), grid_(op.grid()), output_(op.output()), shape_(grid_sample_shape(a, op)) {}
  const char* kernel_name() const override { return "grid_sample"; }
  void run(const RunContext& ctx) override { cpu::grid_sample(shape_, ctx.f32(input_), ctx.f32(grid_), ctx.f32(output_), ctx.threads); }
  void backward(const BackwardContext& b) override {
    float* dx = b.wants(0) ? b.grad(input_) : nullptr;
    float* dgrid = b.wants(1) ? b.grad(grid_) : nullptr;
    if (!dx && !dgrid) return;
    cpu::grid_sample_backward(shape_, b.ctx.f32(input_), b.ctx.f32(grid_), b.grad(output_), dx, b.accumulates(0), dgrid, b.accumulates(1), b.ctx.threads);
  }

 private:
  int input_, grid_, output_;
  kernels::GridSampleShape shape_;
};

class GridSampleDef final : public OpDef {
 public:
  const char* name() const override { return "GridSample"; }
  std::vector<int> inputs(const schema::Op& o) const override { return {o.kind_as_GridSample()->input(), o.kind_as_GridSample()->grid()}; }
  int output(const schema::Op& op) const override { return op.kind_as_GridSample()->output(); }
  void validate(const schema::Op& o, OpValidator& v) const override {
    const auto& op = *o.kind_as_GridSample();
    const TensorDesc& x = v.use(op.input(), "input");
    const TensorDesc& grid = v.use(op.grid(), "grid");
    v.expect_float(x);
    v.expect_float(grid);
    if (x.layout != Layout::kNHWC || x.dims.size() != 4) v.fail("input must be an NHWC image tensor");
    if (grid.layout != Layout::kNHWC || grid.dims.size() != 4) v.fail("grid must be an NHWC map [N, Ho, Wo, 2 x groups]");
    v.check_range(op.mode(), schema::GridSampleMode_MIN, schema::GridSampleMode_MAX, "mode");
    v.check_range(op.padding(), schema::GridSamplePadding_MIN, schema::GridSamplePadding_MAX, "padding");
    v.check_range(op.groups(), 1, kMaxDim, "groups");
    if (x.dims[3] % op.groups() != 0)
      v.fail("input '" + x.name + "' has " + std::to_string(x.dims[3]) + " channels, not a multiple of groups = " + std::to_string(op.groups()));
    if (grid.dims[3] != 2 * static_cast<int64_t>(op.groups()))
      v.fail("grid '" + grid.name + "' " + dims_text(grid.dims) + " does not have 2 x groups = " + std::to_string(2 * static_cast<int64_t>(op.groups())) + " channels");
    if (op.offsets() && (grid.dims[1] % x.dims[1] != 0 || grid.dims[2] % x.dims[2] != 0 || grid.dims[1] / x.dims[1] != grid.dims[2] / x.dims[2]))
      v.fail("offsets: grid '" + grid.name + "' " + dims_text(grid.dims) + " is not the input's map " + dims_text(x.dims) + " times one whole scale");
    TensorDesc& y = v.define_output(op.output(), {-1, grid.dims[1], grid.dims[2], x.dims[3]});
    v.expect_float(y);
    if (y.layout != Layout::kNHWC) v.fail("output must be an NHWC image tensor");
  }
  void describe(const Model::Impl&, const schema::Op& o, OpInfo& info) const override {
    const auto& op = *o.kind_as_GridSample();
    auto attrs = text_stream();
    attrs << schema::EnumNameGridSampleMode(op.mode()) << " padding " << schema::EnumNameGridSamplePadding(op.padding());
    if (op.align_corners()) attrs << " align_corners";
    if (op.groups() != 1) attrs << " groups " << op.groups();
    if (op.offsets()) attrs << " offsets";
    info.attributes = attrs.str();
  }
  std::vector<ParameterSlot> parameters(const schema::Op&) const override { return {}; }
  std::unique_ptr<OpKernel> create_cpu_kernel(const KernelArgs& a) const override { return std::make_unique<GridSampleKernel>(a, *a.op.kind_as_GridSample()); }
};

}  // namespace

template <>
const OpDef& op_definition<schema::OpKind_GridSample>() {
  static const GridSampleDef def;
  return def;
}

}  // namespace edgegan
