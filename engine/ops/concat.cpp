// Concat along a storage axis (1..rank-1).
#include "engine/ops/op_def.h"
#include "engine/ops/op_kernel_util.h"
#include "engine/ops/op_validator.h"
#include "kernels_cpu/concat/concat.h"

namespace edgegan {
namespace {

class ConcatKernel final : public OpKernel {
 public:
  ConcatKernel(const KernelArgs& a, const schema::Concat& op)
      : output_(op.output()), inputs_(op.inputs()->begin(), op.inputs()->end()), sources_(inputs_.size()), targets_(inputs_.size()) {
    const ConcatLayout layout = concat_layout(a, op);
    outer_ = layout.outer;
    chunks_ = layout.chunks;
    for (size_t k = 0; k < inputs_.size(); ++k) {
      const int64_t count = outer_ * chunks_[k];
      if (a.accumulates(k)) temp_floats_.push_back(count), scratch_.take(count);
      else temp_floats_.push_back(0);
    }
  }
  const char* kernel_name() const override { return "concat"; }
  void run(const RunContext& ctx) override {
    for (size_t k = 0; k < inputs_.size(); ++k) sources_[k] = ctx.f32(inputs_[k]);
    cpu::concat(outer_, sources_, chunks_, ctx.f32(output_));
  }
  uint64_t backward_workspace_bytes() const override { return scratch_.bytes(); }
  void backward(const BackwardContext& b) override {
    ScratchLayout scratch(b.ctx.workspace);
    for (size_t k = 0; k < inputs_.size(); ++k) {
      float* temp = temp_floats_[k] ? scratch.take(temp_floats_[k]) : nullptr;
      targets_[k] = b.wants(k) ? input_gradient_target(b, inputs_[k], k, temp) : nullptr;
    }
    cpu::concat_backward(outer_, b.grad(output_), static_cast<int>(inputs_.size()), chunks_.data(), targets_.data());
    for (size_t k = 0; k < inputs_.size(); ++k)
      if (targets_[k]) finish_input_gradient(b, inputs_[k], k, targets_[k], outer_ * chunks_[k]);
  }

 private:
  int output_;
  std::vector<int> inputs_;
  int64_t outer_ = 1;
  std::vector<int64_t> chunks_, temp_floats_;
  ScratchLayout scratch_;  // sizes only
  // Kept between calls so that runs allocate nothing.
  std::vector<const float*> sources_;
  std::vector<float*> targets_;
};

class ConcatDef final : public OpDef {
 public:
  const char* name() const override { return "Concat"; }
  std::vector<int> inputs(const schema::Op& op) const override {
    const auto* in = op.kind_as_Concat()->inputs();
    return {in->begin(), in->end()};
  }
  int output(const schema::Op& op) const override { return op.kind_as_Concat()->output(); }
  void validate(const schema::Op& o, OpValidator& v) const override {
    const auto& op = *o.kind_as_Concat();
    if (!op.inputs() || op.inputs()->size() == 0) v.fail("has no inputs");
    const TensorDesc& first = v.use(op.inputs()->Get(0), "input");
    const int64_t rank = static_cast<int64_t>(first.dims.size());
    v.check_range(op.axis(), 1, rank - 1, "axis");
    std::vector<int64_t> want = first.dims;
    want[static_cast<size_t>(op.axis())] = 0;
    for (int index : *op.inputs()) {
      const TensorDesc& x = v.use(index, "input");
      v.expect_float(x);
      if (x.dims.size() != first.dims.size() || x.layout != first.layout) v.fail("input '" + x.name + "' differs in rank or layout from the first");
      for (int64_t k = 1; k < rank; ++k)
        if (k != op.axis() && x.dims[static_cast<size_t>(k)] != first.dims[static_cast<size_t>(k)])
          v.fail("input '" + x.name + "' has shape " + dims_text(x.dims) + ", incompatible with '" + first.name + "' " + dims_text(first.dims));
      want[static_cast<size_t>(op.axis())] += x.dims[static_cast<size_t>(op.axis())];  // each <= 2^24, at most 2^32 inputs
    }
    TensorDesc& y = v.define_output(op.output(), want);
    v.expect_float(y);
    if (y.layout != first.layout) v.fail("the output's layout differs from the inputs'");
  }
  void describe(const Model::Impl&, const schema::Op& o, OpInfo& info) const override {
    info.attributes = "axis " + std::to_string(o.kind_as_Concat()->axis()) + " (storage order)";
  }
  std::vector<ParameterSlot> parameters(const schema::Op&) const override { return {}; }
  std::unique_ptr<OpKernel> create_cpu_kernel(const KernelArgs& a) const override {
    return std::make_unique<ConcatKernel>(a, *a.op.kind_as_Concat());
  }
};

}  // namespace

template <>
const OpDef& op_definition<schema::OpKind_Concat>() {
  static const ConcatDef def;
  return def;
}

}  // namespace edgegan
