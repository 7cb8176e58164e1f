// The lowering of an ONNX graph into the IR, as each kind's lowering
// (converter/ops/<op>.cpp, OpLowering::lower) sees it: the analysed values, the IR
// built so far, and the fusions that fold a node into the op that produced its input.
#pragma once

#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "converter/egan_ir.h"
#include "converter/onnx_graph.h"
#include "converter/ops/op_lowering.h"

namespace edgegan::converter {

// A spatial map: an ONNX activation [N, C, H, W], or [N, C, L] taken as a map of height
// 1 (1-D convolutions, pools). Both are stored NHWC: [N, H, W, C], [N, 1, L, C].
struct SpatialMap {
  int64_t c = 0, h = 0, w = 0;
};
// The map's (C, H, W) for a rank-4 or rank-3 ONNX shape; nullopt for any other rank.
std::optional<SpatialMap> spatial_map(const std::vector<int64_t>& onnx_shape);
// The storage axis (NHWC) of ONNX axis `axis` (non-negative, not the batch's) of a spatial map of rank 3 or 4.
int spatial_storage_axis(size_t rank, int64_t axis);

class Lowering {
 public:
  Lowering(const OnnxGraph& graph, const AnalysisPass& pass) : g_(graph), a_(pass) {}
  IrModel run();

  // ---- for the kinds' lowerings
  const Value& value(const std::string& name) const;  // after resolving aliases
  std::string resolve(const std::string& name) const;
  const ConstTensor& constant(const Node& n, size_t k) const { return value(n.inputs[k]).c; }
  bool has_input(const Node& n, size_t k) const { return k < n.inputs.size() && !n.inputs[k].empty(); }
  // The IR tensor of input k (a run-time tensor).
  int tensor(const Node& n, size_t k) const;
  // The IR tensor of input k as an NHWC map, for ops that need one (convolutions, pools,
  // per-channel ops on rank 3). A rank-3 tensor stored row-major (a graph input, a
  // Reshape's output) gets a Reshape op into NHWC [N, 1, L, C] in front, made once.
  int spatial_tensor(const Node& n, size_t k);
  bool is_nhwc(int tensor) const { return ir_.tensors[static_cast<size_t>(tensor)].nhwc; }
  // A new IR op of `kind` for `n`, reading `inputs`, writing a new tensor for n's output
  // number `output` (ops with several outputs, such as Split, add one op per output).
  IrOp& add_op(schema::OpKind kind, const Node& n, std::vector<int> inputs, size_t output = 0);
  // ... writing a tensor the ONNX graph does not have (a step of a lowering that takes
  // several ops), of ONNX shape `shape`; `name` must be new.
  IrOp& add_op_with_new_tensor(schema::OpKind kind, const Node& n, std::vector<int> inputs, const std::string& name,
                               const std::vector<int64_t>& shape);
  // The storage axis of ONNX axis `axis` (non-negative) of IR tensor `tensor`, whose ONNX
  // rank is `rank`: NHWC maps (rank 4, and rank 3 stored [N, 1, L, C]) keep channels last.
  int storage_axis(int tensor, size_t rank, int64_t axis) const;
  // The op that produced n's input `input` (0 unless told), if n is its only reader, its
  // kind's epilogue takes `fusion` (OpLowering::epilogue_fusions), it has no activation
  // yet and no fused residual (after which nothing may fold into it: its epilogue ends
  // with the residual), else nullptr.
  IrOp* fusable_producer(const Node& n, Fusion fusion, size_t input = 0);
  // The same op when it is of `kind` instead (a pattern the reader absorbs: a Pad folded
  // into a Conv's pads, the Reshapes around a pixel shuffle or a torch GroupNorm).
  IrOp* producer_of_kind(const Node& n, schema::OpKind kind, size_t input = 0);
  // The index in model().ops of the op that writes IR tensor t (the order ops run in),
  // or -1 for a graph input.
  int producer_index(int t) const;
  // `n` was absorbed by `op`: n's output is op's output.
  void absorb(const Node& n, IrOp& op);
  // W := W * scale[output channel]; bias := bias * scale + shift (a folded BatchNorm or bias).
  void scale_and_shift(IrOp& op, const std::vector<float>& scale, const std::vector<float>& shift);
  // n's output is its input 0 (a reshape that changes nothing). The tensor's readers
  // through either name count as its readers (for fusable_producer).
  void alias_output(const Node& n);
  // Whether IR tensor `t` already holds ONNX value `name`'s shape (storage dims and layout).
  bool tensor_holds(int t, const std::string& name) const;
  // The one run-time node reading `value` (through aliases), or nullptr when there are
  // none, several, or the value is also a graph output.
  const Node* sole_reader(const std::string& value) const;
  // n absorbs `op`, the producer of its input 0 that only n reads (a Pad folded into
  // the Conv after it): op's output tensor becomes n's output. The caller turns op
  // into what n computes.
  void take_over(IrOp& op, const Node& n);
  // The one node that reads n's output 0, or nullptr when several do or it is a graph output.
  const Node* sole_consumer(const Node& n) const;
  // The run-time node that computes `value` (through aliases), or nullptr (a graph input, a constant).
  const Node* producer_node(const std::string& value) const;
  // n was lowered as part of a pattern an earlier node matched: run() skips it.
  void claim(const Node& n) { claimed_.insert(n.outputs[0]); }
  IrModel& model() { return ir_; }
  int64_t opset() const { return g_.opset(); }

 private:
  // n's input `input`'s producer when n is its only reader and nothing ends its epilogue yet.
  IrOp* sole_producer(const Node& n, size_t input);
  int new_tensor(const std::string& name, const Value& v, bool nhwc_map = false);
  // The IR tensor a value of that name and shape becomes (nhwc_map: a rank-3 map stored NHWC).
  static IrTensor ir_tensor(const std::string& name, const Value& v, bool nhwc_map = false);
  // A Reshape op from tensor t (ONNX shape `shape`) into a new tensor `name` stored NHWC or row-major.
  int relayout(int t, const std::string& name, const std::vector<int64_t>& shape, bool to_nhwc, const std::string& op_name);
  void finish_outputs();
  void assign_roles();
  // Decomposed activations (activation_patterns.cpp): per last node of each, the one node
  // that replaces it; its other nodes go into `skipped`.
  std::map<size_t, Node> match_activation_patterns(std::set<size_t>& skipped);

  const OnnxGraph& g_;
  const AnalysisPass& a_;
  IrModel ir_;
  std::map<std::string, std::string> alias_;
  std::map<std::string, int> consumers_;
  std::map<std::string, int> tensor_of_;
  std::map<int, int> producer_;  // tensor -> op
  std::map<int, int> nhwc_copy_;    // row-major rank-3 tensor -> its NHWC relayout
  std::set<int> sequence_outputs_;  // graph outputs: rank-3 maps put back into ONNX order [N, C, L]
  std::set<std::string> claimed_;  // outputs of nodes lowered by an earlier node's pattern
};

}  // namespace edgegan::converter
