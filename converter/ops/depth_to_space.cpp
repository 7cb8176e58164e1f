// DepthToSpace from ONNX DepthToSpace (modes DCR, CRD) and SpaceToDepth, and from the
// Reshape -> Transpose -> Reshape chains that express a pixel shuffle or unshuffle
// (torch exports PixelUnshuffle so at every opset): the Transpose's lowering
// recognises the chain and turns its first Reshape into the op. Any other Transpose of a
// run-time tensor is a Transpose op (transpose.cpp).
#include "converter/egan_writer.h"
#include "converter/errors.h"
#include "converter/lowering.h"
#include "converter/ops/op_lowering.h"
#include "converter/ops/transpose.h"

namespace edgegan::converter {
namespace {

int64_t blocksize(const Node& n) {
  const int64_t b = attr_int(n, "blocksize", 0);
  if (b < 1 || b > 64) throw ConvertError(where(n) + ": attribute 'blocksize' = " + std::to_string(b) + " is not supported (1..64)");
  return b;
}

schema::DepthToSpaceMode d2s_mode(const Node& n) {
  const std::string mode = attr_string(n, "mode", "DCR");
  if (mode == "DCR") return schema::DepthToSpaceMode_DCR;
  if (mode == "CRD") return schema::DepthToSpaceMode_CRD;
  throw ConvertError(where(n) + ": attribute 'mode' = '" + mode + "' is not supported (DCR, CRD)");
}

std::vector<int64_t> transposed(const Node& n, const std::vector<int64_t>& x) {
  std::vector<int64_t> perm = attr_ints(n, "perm", {});
  if (perm.empty())
    for (size_t k = x.size(); k-- > 0;) perm.push_back(static_cast<int64_t>(k));
  if (perm.size() != x.size()) throw ConvertError(where(n) + ": attribute 'perm' has " + std::to_string(perm.size()) + " values for a rank-" + std::to_string(x.size()) + " input");
  std::vector<int64_t> y;
  std::vector<bool> seen(x.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(x.size()) || seen[static_cast<size_t>(p)]) throw ConvertError(where(n) + ": attribute 'perm' is not a permutation");
    seen[static_cast<size_t>(p)] = true;
    y.push_back(x[static_cast<size_t>(p)]);
  }
  return y;
}

// A pixel (un)shuffle written as Reshape [x: N,C,H,W] -> 6-D -> Transpose(perm) -> 4-D.
struct ShuffleMatch {
  bool found = false;
  bool space_to_depth = false;
  schema::DepthToSpaceMode mode = schema::DepthToSpaceMode_DCR;
  int64_t block = 1;
};

ShuffleMatch match_shuffle(const std::vector<int64_t>& x, const std::vector<int64_t>& r6, const std::vector<int64_t>& perm,
                           const std::vector<int64_t>& y) {
  ShuffleMatch m;
  if (x.size() != 4 || r6.size() != 6 || perm.size() != 6 || y.size() != 4) return m;
  const int64_t n = x[0], c = x[1], h = x[2], w = x[3];
  using P = std::vector<int64_t>;
  struct Form {
    bool s2d;
    schema::DepthToSpaceMode mode;
    P perm;
  };
  const Form forms[] = {{false, schema::DepthToSpaceMode_DCR, {0, 3, 4, 1, 5, 2}},
                        {false, schema::DepthToSpaceMode_CRD, {0, 1, 4, 2, 5, 3}},
                        {true, schema::DepthToSpaceMode_DCR, {0, 3, 5, 1, 2, 4}},
                        {true, schema::DepthToSpaceMode_CRD, {0, 1, 3, 5, 2, 4}}};
  for (const Form& f : forms) {
    if (perm != f.perm) continue;
    const int64_t b = f.s2d ? r6[3] : (f.mode == schema::DepthToSpaceMode_DCR ? r6[1] : r6[2]);
    if (b < 1 || b > 64) continue;
    P want6, want4;
    if (f.s2d) {
      if (h % b || w % b) continue;
      want6 = {n, c, h / b, b, w / b, b};
      want4 = {n, c * b * b, h / b, w / b};
    } else {
      if (c % (b * b)) continue;
      want6 = f.mode == schema::DepthToSpaceMode_DCR ? P{n, b, b, c / (b * b), h, w} : P{n, c / (b * b), b, b, h, w};
      want4 = {n, c / (b * b), h * b, w * b};
    }
    if (r6 == want6 && y == want4) {
      m.found = true;
      m.space_to_depth = f.s2d;
      m.mode = f.mode;
      m.block = b;
      return m;
    }
  }
  return m;
}

class DepthToSpaceLowering final : public OpLowering {
 public:
  std::vector<std::string> onnx_ops() const override { return {"DepthToSpace", "SpaceToDepth", "Transpose"}; }

  void infer(RuntimeNode& rn) const override {
    const Node& n = rn.node;
    const Value& x = rn.runtime_input(0);
    if (n.op == "Transpose") {
      check_attributes(n, {"perm"});
      transpose_perm(n, x.shape.size());
      rn.set_output(transposed(n, x.shape));
      return;
    }
    if (x.shape.size() != 4) throw ConvertError(where(n) + ": input has rank " + std::to_string(x.shape.size()) + "; only rank-4 NCHW maps are supported");
    const int64_t b = blocksize(n);
    if (n.op == "DepthToSpace") {
      check_attributes(n, {"blocksize", "mode"});
      d2s_mode(n);
      if (x.shape[1] % (b * b)) throw ConvertError(where(n) + ": " + std::to_string(x.shape[1]) + " channels are not a multiple of 'blocksize'^2");
      rn.set_output({x.shape[0], x.shape[1] / (b * b), x.shape[2] * b, x.shape[3] * b});
    } else {
      check_attributes(n, {"blocksize", "mode"});  // mode: opset 25
      d2s_mode(n);
      if (x.shape[2] % b || x.shape[3] % b)
        throw ConvertError(where(n) + ": the map " + std::to_string(x.shape[2]) + "x" + std::to_string(x.shape[3]) + " is not a whole number of 'blocksize' blocks");
      rn.set_output({x.shape[0], x.shape[1] * b * b, x.shape[2] / b, x.shape[3] / b});
    }
  }

  void lower(const Node& n, Lowering& l) const override {
    if (n.op != "Transpose") {
      IrOp& o = l.add_op(schema::OpKind_DepthToSpace, n, {l.tensor(n, 0)});
      o.block = blocksize(n);
      o.space_to_depth = n.op == "SpaceToDepth";
      o.depth_to_space_mode = d2s_mode(n);  // DCR when absent, SpaceToDepth's order before opset 25
      return;
    }
    // The middle of Reshape -> Transpose -> Reshape: the first Reshape (read only here)
    // becomes the op, writing the last Reshape's output.
    IrOp* first = l.producer_of_kind(n, schema::OpKind_Reshape);
    const Node* last = l.sole_consumer(n);
    ShuffleMatch m;
    if (first && last && last->op == "Reshape") {
      const IrTensor& x = l.model().tensors[static_cast<size_t>(first->inputs[0])];
      std::vector<int64_t> nchw;
      if (x.nhwc) nchw = {1, x.dims[3], x.dims[1], x.dims[2]};
      std::vector<int64_t> r6 = l.value(n.inputs[0]).shape, y = l.value(last->outputs[0]).shape;
      if (!r6.empty()) r6[0] = 1;
      if (!y.empty()) y[0] = 1;
      std::vector<int64_t> perm = attr_ints(n, "perm", {});
      m = match_shuffle(nchw, r6, perm, y);
    }
    if (!m.found) return lower_transpose(n, l);  // any other permutation
    first->kind = schema::OpKind_DepthToSpace;
    first->block = m.block;
    first->depth_to_space_mode = m.mode;
    first->space_to_depth = m.space_to_depth;
    first->name += "+" + n.name;
    l.take_over(*first, *last);
    l.claim(*last);
  }

  flatbuffers::Offset<schema::Op> write(const IrModel&, const IrOp& op, EganWriter& w) const override {
    const auto body = schema::CreateDepthToSpace(w.fbb(), op.inputs[0], op.output, static_cast<int>(op.block),
                                                 static_cast<schema::DepthToSpaceMode>(op.depth_to_space_mode), op.space_to_depth);
    return w.op(op, schema::OpKind_DepthToSpace, body.Union());
  }
};

}  // namespace

template <>
const OpLowering& op_lowering<schema::OpKind_DepthToSpace>() {
  static const DepthToSpaceLowering lowering;
  return lowering;
}

}  // namespace edgegan::converter
