// Embedding from ONNX Gather of a constant 2-D table by a run-time integer tensor
// (a conditional GAN's label lookup); Gather of constants is folded, not lowered.
#include "converter/egan_writer.h"
#include "converter/errors.h"
#include "converter/lowering.h"
#include "converter/ops/op_lowering.h"

namespace edgegan::converter {
namespace {

class EmbeddingLowering final : public OpLowering {
 public:
  std::vector<std::string> onnx_ops() const override { return {"Gather"}; }

  void infer(RuntimeNode& rn) const override {
    const Node& n = rn.node;
    check_attributes(n, {"axis"});
    const Value& data = rn.input(0);
    const Value& idx = rn.input(1);
    if (!data.is_const || idx.is_const) throw ConvertError(where(n) + ": only a constant table indexed by a run-time tensor is supported");
    if (attr_int(n, "axis", 0) != 0) throw ConvertError(where(n) + ": attribute 'axis' must be 0 for an embedding lookup");
    if (!idx.is_int) throw ConvertError(where(n) + ": indices must be integers");
    if (data.c.dims.size() != 2 || data.c.is_int) throw ConvertError(where(n) + ": the embedding table must be a 2-D float tensor");
    std::vector<int64_t> out = idx.shape;
    out.push_back(data.c.dims[1]);
    rn.set_output(out);
  }

  void lower(const Node& n, Lowering& l) const override {
    const ConstTensor& table = l.constant(n, 0);
    IrOp& o = l.add_op(schema::OpKind_Embedding, n, {l.tensor(n, 1)});
    o.in_features = table.dims[0];
    o.out_features = table.dims[1];
    o.weights = table.f;
  }

  flatbuffers::Offset<schema::Op> write(const IrModel&, const IrOp& op, EganWriter& w) const override {
    const uint32_t table = w.blob(op.weights);
    const auto body = schema::CreateEmbedding(w.fbb(), op.inputs[0], op.output, static_cast<int>(op.in_features), static_cast<int>(op.out_features), table);
    return w.op(op, schema::OpKind_Embedding, body.Union());
  }
};

}  // namespace

template <>
const OpLowering& op_lowering<schema::OpKind_Embedding>() {
  static const EmbeddingLowering lowering;
  return lowering;
}

}  // namespace edgegan::converter
