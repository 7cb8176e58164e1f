// Transpose (a permutation of storage axes) from an ONNX Transpose of a run-time tensor
// that is not part of a pixel shuffle (depth_to_space.cpp takes those): attention's
// k.permute(0, 2, 1), heads moved around. The ONNX perm is turned into a storage one
// through each side's layout (NHWC maps keep channels last).
#include "converter/ops/transpose.h"

#include <algorithm>

#include "converter/egan_writer.h"
#include "converter/errors.h"
#include "converter/ops/op_lowering.h"

namespace edgegan::converter {
namespace {

// Per storage axis of an IR tensor of ONNX rank `rank`, its ONNX axis (-1: the size-1
// axis a rank-3 map gets in storage, [N, 1, L, C]).
std::vector<int> logical_of_storage(const IrTensor& t, size_t rank) {
  if (t.nhwc && rank == 4) return {0, 2, 3, 1};
  if (t.nhwc && rank == 3) return {0, -1, 2, 1};
  std::vector<int> v(rank);
  for (size_t k = 0; k < rank; ++k) v[k] = static_cast<int>(k);
  return v;
}

class TransposeLowering final : public OpLowering {
 public:
  std::vector<std::string> onnx_ops() const override { return {}; }  // ONNX Transpose: depth_to_space.cpp
  void infer(RuntimeNode&) const override {}
  void lower(const Node& n, Lowering& l) const override { lower_transpose(n, l); }
  flatbuffers::Offset<schema::Op> write(const IrModel&, const IrOp& op, EganWriter& w) const override {
    const auto body = schema::CreateTranspose(w.fbb(), op.inputs[0], op.output, w.fbb().CreateVector(op.perm));
    return w.op(op, schema::OpKind_Transpose, body.Union());
  }
};

}  // namespace

std::vector<int64_t> transpose_perm(const Node& n, size_t rank) {
  std::vector<int64_t> perm = attr_ints(n, "perm", {});
  if (perm.empty())
    for (size_t k = 0; k < rank; ++k) perm.push_back(static_cast<int64_t>(rank - 1 - k));
  if (perm.size() != rank) throw ConvertError(where(n) + ": attribute 'perm' has " + std::to_string(perm.size()) + " entries for a rank-" + std::to_string(rank) + " input");
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t k = 0; k < rank; ++k)
    if (sorted[k] != static_cast<int64_t>(k)) throw ConvertError(where(n) + ": attribute 'perm' is not a permutation");
  return perm;
}

void lower_transpose(const Node& n, Lowering& l) {
  const size_t rank = l.value(n.inputs[0]).shape.size();
  const std::vector<int64_t> perm = transpose_perm(n, rank);
  if (perm[0] != 0) throw ConvertError(where(n) + ": a Transpose that moves the batch (perm[0] = " + std::to_string(perm[0]) + ") is not supported");
  const int x = l.tensor(n, 0);
  IrOp& o = l.add_op(schema::OpKind_Transpose, n, {x});
  const std::vector<int> in = logical_of_storage(l.model().tensors[static_cast<size_t>(x)], rank);
  const std::vector<int> out = logical_of_storage(l.model().tensors[static_cast<size_t>(o.output)], rank);
  for (int lo : out) {
    const int want = lo < 0 ? -1 : static_cast<int>(perm[static_cast<size_t>(lo)]);
    o.perm.push_back(static_cast<int>(std::find(in.begin(), in.end(), want) - in.begin()));
  }
}

template <>
const OpLowering& op_lowering<schema::OpKind_Transpose>() {
  static const TransposeLowering lowering;
  return lowering;
}

}  // namespace edgegan::converter
