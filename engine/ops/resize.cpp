// Resize: nearest / bilinear / bicubic resampling of an NHWC map along H and W.
#include <cmath>

#include "engine/ops/half_route.h"
#include "engine/ops/op_def.h"
#include "engine/ops/op_kernel_util.h"
#include "engine/ops/op_text.h"
#include "engine/ops/op_validator.h"
#include "kernels_cpu/resize/resize.h"

namespace edgegan {
namespace {

static_assert(static_cast<int>(schema::ResizeMode_Cubic) == static_cast<int>(cpu::ResizeMode::kCubic) &&
                  static_cast<int>(schema::ResizeMode_Linear) == static_cast<int>(cpu::ResizeMode::kLinear) &&
                  static_cast<int>(schema::ResizeCoordinates_HalfPixel) == static_cast<int>(cpu::ResizeCoordinates::kHalfPixel) &&
                  static_cast<int>(schema::ResizeCoordinates_PytorchHalfPixel) == static_cast<int>(cpu::ResizeCoordinates::kPytorchHalfPixel) &&
                  static_cast<int>(schema::ResizeCoordinates_AlignCorners) == static_cast<int>(cpu::ResizeCoordinates::kAlignCorners) &&
                  static_cast<int>(schema::ResizeCoordinates_Asymmetric) == static_cast<int>(cpu::ResizeCoordinates::kAsymmetric) &&
                  static_cast<int>(schema::ResizeCoordinates_HalfPixelSymmetric) == static_cast<int>(cpu::ResizeCoordinates::kHalfPixelSymmetric) &&
                  static_cast<int>(schema::ResizeCoordinates_TfHalfPixelForNn) == static_cast<int>(cpu::ResizeCoordinates::kTfHalfPixelForNn) &&
                  static_cast<int>(schema::ResizeNearest_RoundPreferCeil) == static_cast<int>(cpu::ResizeNearest::kRoundPreferCeil) &&
                  static_cast<int>(schema::ResizeNearest_Floor) == static_cast<int>(cpu::ResizeNearest::kFloor) &&
                  static_cast<int>(schema::ResizeNearest_Ceil) == static_cast<int>(cpu::ResizeNearest::kCeil),
              "the schema's Resize enums and the kernel's are numbered alike");

// Scales a file may hold: far beyond any upsampler, small enough that source coordinates stay finite.
constexpr float kMinScale = 1e-4f, kMaxScale = 1e4f;
constexpr int64_t kMaxResizeLength = int64_t{1} << 20;  // tables of at most ~100 MiB


class ResizeKernel final : public OpKernel {
 public:
  ResizeKernel(const OpDef& def, const KernelArgs& a, const schema::Resize& op)
      : input_(op.input()), output_(op.output()), shape_(resize_shape(op, a.tensor(op.input()), a.tensor(op.output()), a.batch)),
        halves_(half_storage(a)), workspace_floats_(cpu::resize_workspace(shape_, a.threads, halves_)), overflow_(def, a.op) {
    if (a.tracker) {  // a kernel that runs: its tables, built once
      storage_ = TrackedBuffer(*a.tracker, repacked_weight_bytes());
      tables_ = cpu::resize_build_tables(shape_, storage_.data());
    }
  }
  const char* kernel_name() const override { return halves_ ? "resize_f16" : "resize"; }
  bool stores_halves() const override { return halves_; }
  void check_run() override { overflow_.check(); }
  uint64_t workspace_bytes() const override { return static_cast<uint64_t>(workspace_floats_) * sizeof(float); }
  // The per-axis tap tables, built once from the shapes: the kernel's own weight-like copy.
  uint64_t repacked_weight_bytes() const override { return cpu::resize_table_bytes(shape_); }
  uint64_t macs() const override {
    if (shape_.params.mode == cpu::ResizeMode::kNearest) return 0;
    const uint64_t taps = static_cast<uint64_t>(cpu::resize_taps(shape_.params.mode));
    return static_cast<uint64_t>(shape_.batch * shape_.h.out * shape_.channels) * taps *
           static_cast<uint64_t>(shape_.w.in + shape_.w.out);
  }
  void run(const RunContext& ctx) override {
    auto* ws = reinterpret_cast<float*>(ctx.workspace);
    if (!halves_) return cpu::resize(shape_, tables_, ctx.f32(input_), ctx.f32(output_), ws, ctx.threads);
    overflow_.clear();
    overflow_.add(cpu::resize_halves(shape_, tables_, reinterpret_cast<const uint16_t*>(ctx.f32(input_)), reinterpret_cast<uint16_t*>(ctx.f32(output_)), ws,
                                     ctx.threads));
  }
  void backward(const BackwardContext& b) override {
    if (!b.wants(0)) return;
    cpu::resize_backward(shape_, tables_, b.grad(output_), b.grad(input_), b.accumulates(0), b.ctx.threads);
  }

 private:
  int input_, output_;
  cpu::ResizeShape shape_;
  bool halves_;  // an fp16 session's native route
  int64_t workspace_floats_;
  HalfOverflow overflow_;
  TrackedBuffer storage_;
  cpu::ResizeTables tables_;
};

const char* mode_name(schema::ResizeMode m) {
  return m == schema::ResizeMode_Nearest ? "nearest" : m == schema::ResizeMode_Linear ? "linear" : "cubic";
}

class ResizeDef final : public OpDef {
 public:
  const char* name() const override { return "Resize"; }
  std::vector<int> inputs(const schema::Op& op) const override { return {op.kind_as_Resize()->input()}; }
  int output(const schema::Op& op) const override { return op.kind_as_Resize()->output(); }
  void validate(const schema::Op& o, OpValidator& v) const override {
    const auto& op = *o.kind_as_Resize();
    const TensorDesc& x = v.use(op.input(), "input");
    v.expect_float(x);
    if (x.layout != Layout::kNHWC) v.fail("input must be an NHWC image tensor");
    v.check_range(op.mode(), schema::ResizeMode_MIN, schema::ResizeMode_MAX, "mode");
    v.check_range(op.coordinates(), schema::ResizeCoordinates_MIN, schema::ResizeCoordinates_MAX, "coordinates");
    v.check_range(op.nearest_mode(), schema::ResizeNearest_MIN, schema::ResizeNearest_MAX, "nearest_mode");
    if (!std::isfinite(op.cubic_coeff_a()) || std::abs(op.cubic_coeff_a()) > 16.f) v.fail("cubic_coeff_a is out of range");
    for (float scale : {op.scale_h(), op.scale_w()})
      if (!(scale == 0.f || (scale >= kMinScale && scale <= kMaxScale))) v.fail("scale is outside 1e-4..1e4 (or 0: from the sizes)");
    TensorDesc& y = v.define(op.output());
    v.expect_float(y);
    if (y.layout != Layout::kNHWC) v.fail("output must be an NHWC image tensor");
    if (v.resizing()) v.derive_dims(y, resized_dims(v, op, x));
    if (y.dims[3] != x.dims[3] || y.dims[1] < 1 || y.dims[2] < 1)
      v.fail("output '" + y.name + "' " + dims_text(y.dims) + " is not a resized " + dims_text(x.dims));
    // The kernel's tables grow with the lengths (not with the channels): bounded so a
    // hostile file cannot ask for gigabytes of them with a one-pixel-wide map.
    for (int64_t length : {x.dims[1], y.dims[1], y.dims[2]}) v.check_range(length, 1, kMaxResizeLength, "resized map length");
  }
  // At another input size: ONNX's floor(length * scale), or, for a resize to fixed
  // sizes, the file's integer ratio between the lengths.
  static std::vector<int64_t> resized_dims(const OpValidator& v, const schema::Resize& op, const TensorDesc& x) {
    const std::vector<int64_t>& file_x = v.file_dims(op.input());
    std::vector<int64_t> dims = v.file_dims(op.output());
    for (size_t k : {size_t{1}, size_t{2}}) {
      const float scale = k == 1 ? op.scale_h() : op.scale_w();
      const int64_t in = x.dims[k], file_in = file_x[k], file_out = dims[k];
      if (scale != 0.f) dims[k] = static_cast<int64_t>(std::floor(static_cast<double>(in) * scale));
      else if (in == file_in) dims[k] = file_out;
      else if (file_out % file_in == 0) dims[k] = in * (file_out / file_in);
      else if (file_in % file_out == 0 && in % (file_in / file_out) == 0) dims[k] = in / (file_in / file_out);
      else
        v.fail("resizes " + std::to_string(file_in) + " to a fixed " + std::to_string(file_out) + ", not by an integer factor; it cannot follow a new input size");
    }
    return dims;
  }

  void describe(const Model::Impl&, const schema::Op& o, OpInfo& info) const override {
    const auto& a = *o.kind_as_Resize();
    auto attrs = text_stream();
    attrs << mode_name(a.mode()) << " " << schema::EnumNameResizeCoordinates(a.coordinates());
    if (a.mode() == schema::ResizeMode_Nearest) attrs << " " << schema::EnumNameResizeNearest(a.nearest_mode());
    if (a.mode() == schema::ResizeMode_Cubic) attrs << " a " << a.cubic_coeff_a();
    if (a.exclude_outside()) attrs << " exclude_outside";
    if (a.scale_h() != 0.f || a.scale_w() != 0.f) attrs << " scales " << a.scale_h() << "," << a.scale_w();
    info.attributes = attrs.str();
  }
  std::vector<ParameterSlot> parameters(const schema::Op&) const override { return {}; }
  std::unique_ptr<OpKernel> create_cpu_kernel(const KernelArgs& a) const override { return std::make_unique<ResizeKernel>(*this, a, *a.op.kind_as_Resize()); }
};

}  // namespace

template <>
const OpDef& op_definition<schema::OpKind_Resize>() {
  static const ResizeDef def;
  return def;
}

}  // namespace edgegan
