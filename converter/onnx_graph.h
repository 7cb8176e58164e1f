// An ONNX graph as the converter sees it, and the analysis pass that folds the
// constant sub-graphs (weights, Identity chains, torch's Shape/Gather/Concat
// arithmetic) and infers every activation's shape for a given batch size.
//
// The pass runs twice, with two batch sizes: a value that changes with the batch
// is either an activation (its dim 0) or shape arithmetic, and the converter
// checks that every activation's per-sample shape is the same in both runs, so a
// model whose structure depends on the batch in any other way is rejected.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>  // defines ONNX_API, then includes onnx-ml.pb.h

#include "converter/const_tensor.h"

namespace edgegan::converter {

// The default-domain opsets the converter reads: 11 (the oldest torch.onnx exports
// worth supporting) to 28 (the newest the onnx 1.23 wheel knows). Ops whose meaning changed across
// these versions read the model's opset (OnnxGraph::opset) where it matters.
inline constexpr int64_t kOldestOpset = 11, kNewestOpset = 28;

struct Value {
  bool is_const = false;
  ConstTensor c;                  // when is_const
  bool is_int = false;            // activation dtype: int64 (labels) or float32
  std::vector<int64_t> shape;     // activation shape, dim 0 = batch (ONNX NCHW order)
};

struct Node {
  const onnx::NodeProto* proto = nullptr;
  std::string name;               // node name, or "<op> #index" when unnamed
  std::string op;
  std::vector<std::string> inputs, outputs;  // "" = omitted optional input
};

struct GraphInput {
  std::string name;
  bool is_int = false;
  std::vector<int64_t> dims;      // dims[0] ignored (batch)
};

struct AnalysisPass {
  int64_t batch = 0;
  int64_t export_batch = 0;       // declared_batch() of the graph
  std::map<std::string, Value> values;
  // The graph's nodes in execution order, with every If replaced by the nodes
  // of the branch its (constant) condition selects.
  std::vector<Node> nodes;
  std::vector<bool> folded;       // per node: computed at conversion time
  std::vector<bool> branch_choices;  // one per inlined If, to compare passes
  std::vector<std::shared_ptr<onnx::NodeProto>> synthetic;  // nodes made for If outputs and LayerNormalization's steps
};

class OnnxGraph {
 public:
  explicit OnnxGraph(const onnx::ModelProto& model);

  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<GraphInput>& inputs() const { return inputs_; }
  const std::vector<std::string>& outputs() const { return outputs_; }
  int64_t opset() const { return opset_; }
  int64_t export_batch() const { return export_batch_; }  // declared_batch() of the graph

  AnalysisPass analyse(int64_t batch) const;

 private:
  void evaluate(const Node& n, AnalysisPass& pass) const;
  void inline_if(const Node& n, AnalysisPass& pass) const;
  void expand_layer_norm(const Node& n, AnalysisPass& pass) const;

  std::vector<Node> nodes_;
  std::vector<GraphInput> inputs_;
  std::vector<std::string> outputs_;
  std::map<std::string, ConstTensor> initializers_;
  int64_t opset_ = 0;
  int64_t export_batch_ = 0;
};

// A node computed at run time, as its kind's shape inference sees it
// (OpLowering::infer): its inputs and the output shape it sets.
class RuntimeNode {
 public:
  RuntimeNode(const Node& n, AnalysisPass& pass) : node(n), pass_(pass) {}
  const Node& node;
  int64_t batch() const { return pass_.batch; }
  int64_t export_batch() const { return pass_.export_batch; }
  bool has_input(size_t k) const { return k < node.inputs.size() && !node.inputs[k].empty(); }
  const Value& input(size_t k) const;                              // defined before this node
  const Value& runtime_input(size_t k) const;                      // ... and computed at run time
  const ConstTensor& constant(size_t k, const char* what) const;  // ... and a constant
  const ConstTensor& float_constant(size_t k, const char* what) const;  // ... of floating-point values (weights)
  const std::map<std::string, Value>& values() const { return pass_.values; }
  // The output: positive dimensions after the batch, at most 2^32 values per sample.
  void set_output(std::vector<int64_t> shape, bool is_int = false) { set_output_at(0, std::move(shape), is_int); }
  void set_output_at(size_t k, std::vector<int64_t> shape, bool is_int = false);  // ops with several outputs

 private:
  AnalysisPass& pass_;
};

// The batch every graph input declares (torch.onnx.export without dynamic axes), or 0
// where one is symbolic or they differ.
int64_t declared_batch(const onnx::GraphProto& g);

// ---- shape arithmetic shared by constant folding and the run-time ops (errors name the node)
int64_t product(const std::vector<int64_t>& v, size_t from = 0);
std::vector<int64_t> as_ints(const Value& v, const Node& n, const char* what);  // a constant integer tensor
std::vector<int64_t> reshape_target(const Node& n, const std::vector<int64_t>& in, std::vector<int64_t> shape);  // ONNX Reshape
std::vector<int64_t> unsqueeze_shape(const Node& n, std::vector<int64_t> shape, std::vector<int64_t> axes);
std::vector<int64_t> squeeze_shape(const Node& n, const std::vector<int64_t>& shape, std::vector<int64_t> axes);
std::vector<int64_t> axes_of(const Node& n, const std::map<std::string, Value>& values);  // attribute or input 1

// ---- attribute access (errors name the node and attribute)
const onnx::AttributeProto* find_attr(const Node& n, const std::string& name);
int64_t attr_int(const Node& n, const std::string& name, int64_t fallback);
float attr_float(const Node& n, const std::string& name, float fallback);
std::string attr_string(const Node& n, const std::string& name, const std::string& fallback);
std::vector<int64_t> attr_ints(const Node& n, const std::string& name, std::vector<int64_t> fallback);
// Rejects any attribute not in `supported`, naming it.
void check_attributes(const Node& n, std::initializer_list<const char*> supported);
std::string where(const Node& n);  // "node 'name' (Op)"

// ---- convolution geometry, shared by shape inference and lowering
struct ConvGeometry {
  int64_t in_channels = 0, out_channels = 0;
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t out_h = 0, out_w = 0;
  int64_t groups = 1;  // ONNX 'group': in and out channels split into this many groups (Conv only)
};
// x: [N, C, H, W]; w: ConvTranspose [Cin, Cout, kh, kw] / Conv [Cout, Cin, kh, kw].
// A 1-D convolution (x [N, C, L], weights of rank 3, attributes of the width only) is
// resolved as a 2-D one of height 1: kernel_h = stride_h = dilation_h = 1, out_h = 1.
ConvGeometry resolve_conv_transpose(const Node& n, std::vector<int64_t> x, std::vector<int64_t> w);
ConvGeometry resolve_conv(const Node& n, std::vector<int64_t> x, std::vector<int64_t> w);

}  // namespace edgegan::converter
