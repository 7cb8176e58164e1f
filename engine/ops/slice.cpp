// Slice: a strided slice along one storage axis (Split, torch.chunk, crops).
#include "engine/ops/op_def.h"
#include "engine/ops/op_kernel_util.h"
#include "engine/ops/op_text.h"
#include "engine/ops/op_validator.h"
#include "kernels_cpu/slice/slice.h"

namespace edgegan {
namespace {

class SliceKernel final : public OpKernel {
 public:
  SliceKernel(const KernelArgs& a, const schema::Slice& op) : input_(op.input()), output_(op.output()), shape_(slice_shape(a, op)) {}
  const char* kernel_name() const override { return "slice"; }
  void run(const RunContext& ctx) override { cpu::slice(shape_, ctx.f32(input_), ctx.f32(output_), ctx.threads); }
  void backward(const BackwardContext& b) override {
    if (b.wants(0)) cpu::slice_backward(shape_, b.grad(output_), b.grad(input_), b.accumulates(0), b.ctx.threads);
  }

 private:
  int input_, output_;
  cpu::SliceShape shape_;
};

class SliceDef final : public OpDef {
 public:
  const char* name() const override { return "Slice"; }
  std::vector<int> inputs(const schema::Op& op) const override { return {op.kind_as_Slice()->input()}; }
  int output(const schema::Op& op) const override { return op.kind_as_Slice()->output(); }
  void validate(const schema::Op& o, OpValidator& v) const override {
    const auto& op = *o.kind_as_Slice();
    const TensorDesc& x = v.use(op.input(), "input");
    TensorDesc& y = v.define(op.output());
    v.expect_float(x);
    v.expect_float(y);
    if (x.dims.size() != y.dims.size() || x.layout != y.layout) v.fail("input and output differ in rank or layout");
    const int64_t rank = static_cast<int64_t>(x.dims.size());
    v.check_range(op.axis(), 1, rank - 1, "axis");
    const size_t axis = static_cast<size_t>(op.axis());
    if (v.resizing()) {  // the rows taken are fixed: the sliced axis must keep its length
      if (x.dims[axis] != v.file_dims(op.input())[axis])
        v.fail("takes fixed rows of an axis whose length changes with the input size");
      std::vector<int64_t> dims = x.dims;
      dims[axis] = y.dims[axis];
      v.derive_dims(y, dims);
    }
    for (size_t k = 1; k < x.dims.size(); ++k)
      if (k != axis && x.dims[k] != y.dims[k]) v.fail("output " + dims_text(y.dims) + " differs from input " + dims_text(x.dims) + " off the axis");
    const int64_t length = x.dims[axis], count = y.dims[axis];
    v.check_range(op.start(), 0, length - 1, "start");
    v.check_range(op.step(), -length, length, "step");
    if (op.step() == 0) v.fail("step is 0");
    const int64_t last = op.start() + (count - 1) * op.step();  // |step| <= length, count <= 2^24: no overflow
    if (count > length || last < 0 || last >= length)
      v.fail(std::to_string(count) + " rows from " + std::to_string(op.start()) + " by " + std::to_string(op.step()) + " leave the input's " +
             std::to_string(length));
  }
  void describe(const Model::Impl&, const schema::Op& o, OpInfo& info) const override {
    const auto& op = *o.kind_as_Slice();
    auto text = text_stream();
    text << "axis " << op.axis() << " (storage order) from " << op.start() << " step " << op.step();
    info.attributes = text.str();
  }
  std::vector<ParameterSlot> parameters(const schema::Op&) const override { return {}; }
  std::unique_ptr<OpKernel> create_cpu_kernel(const KernelArgs& a) const override { return std::make_unique<SliceKernel>(a, *a.op.kind_as_Slice()); }
};

}  // namespace

template <>
const OpDef& op_definition<schema::OpKind_Slice>() {
  static const SliceDef def;
  return def;
}

}  // namespace edgegan
