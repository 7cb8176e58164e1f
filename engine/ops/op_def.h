// What the engine knows about one kind of op, in one place: the tensors it reads and
// writes, how a model file's op of that kind is validated, how `inspect` describes
// it, which of its weights train, and its CPU kernel (forward and backward).
//
// Every op kind of the schema (egan.fbs, union OpKind) has exactly one definition,
// in engine/ops/<op>.cpp, which specialises op_definition<Kind>() below. The registry
// (op_registry.cpp) builds its table from the schema's list of kinds, so a kind
// without a definition, or a definition without its file, fails the build at link
// time; nothing else in the engine switches over op kinds. docs/adding-an-op.md walks
// through adding one.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/memory_tracker.h"
#include "engine/model_impl.h"
#include "engine/ops/activation_schema.h"
#include "kernels_cpu/activation/activation.h"
#include "kernels_common/conv_geometry.h"
#include "kernels_cpu/common/epilogue.h"

namespace edgegan {

class OpValidator;  // op_validator.h


// Everything a kernel is built from.
struct KernelArgs {
  const Model::Impl& model;
  const schema::Op& op;
  const WeightSource& weights;
  int64_t batch = 1;
  int threads = 1;  // the session's, resolved (its workspace may depend on them)
  ConvTranspose2DAlgo conv_transpose2d_algo = ConvTranspose2DAlgo::kSplit;
  Precision precision = Precision::kFp32;  // SessionOptions::precision (a backend refuses one it cannot run)
  // Weight copies a kernel makes (transformed filters, baselines' full kernels) are
  // allocated through it; nullptr: the kernel is built for planning only and never runs.
  MemoryTracker* tracker = nullptr;
  // Bytes of transformed-filter copies the session may still keep (a kernel that keeps
  // one takes its size off; one that finds too little makes its filters in every run).
  // nullptr: no limit.
  int64_t* filter_copy_budget = nullptr;
  bool training = false;  // a Trainer's: kernels keep what backward() needs
  // Training: per input, whether its gradient is added to one another reader of the
  // same tensor wrote before (the plan's gradient_accumulation), so the kernel sizes
  // a scratch for it; and the transposed convolutions' backward baseline.
  std::vector<char> accumulate_input;
  bool zero_insert_backward = false;
  // An fp16 plan's float tensors kept as fp32 (a layer that overflowed the half range;
  // nullptr or empty: none). Their readers and writer run through the half adapter.
  const std::vector<char>* fp32_tensors = nullptr;
  bool accumulates(size_t k) const { return k < accumulate_input.size() && accumulate_input[k] != 0; }
  bool kept_fp32(int t) const { return fp32_tensors && static_cast<size_t>(t) < fp32_tensors->size() && (*fp32_tensors)[static_cast<size_t>(t)]; }

  const TensorDesc& tensor(int index) const { return model.tensors[static_cast<size_t>(index)]; }
  cpu::Epilogue epilogue(const schema::Epilogue* ep) const;
  // The 2-D geometry of a (transposed) convolution between tensors x and y.
  template <typename ConvOp>
  cpu::ConvShape conv_shape(const ConvOp& op) const {
    const TensorDesc& x = tensor(op.input());
    const TensorDesc& y = tensor(op.output());
    return {batch, op.in_channels(), op.out_channels(),
            {x.dims[1], op.kernel_h(), op.stride_h(), op.dilation_h(), op.pad_top(), op.pad_bottom(), y.dims[1]},
            {x.dims[2], op.kernel_w(), op.stride_w(), op.dilation_w(), op.pad_left(), op.pad_right(), y.dims[2]}};
  }
};

// One run of a kernel: the address of every tensor in the backend's memory (the
// planned arena), and the op's own scratch.
struct RunContext {
  const std::vector<uint8_t*>* tensors = nullptr;
  uint8_t* workspace = nullptr;  // workspace_bytes() (forward) or backward_workspace_bytes()
  int64_t batch = 1;
  int threads = 1;
  void* stream = nullptr;  // the backend's queue (BackendStream::native): a cudaStream_t for CUDA kernels
  float* f32(int tensor) const { return reinterpret_cast<float*>((*tensors)[static_cast<size_t>(tensor)]); }
  const int64_t* i64(int tensor) const { return reinterpret_cast<const int64_t*>((*tensors)[static_cast<size_t>(tensor)]); }
};

// One backward run: the forward's values (ctx.tensors, kept by the training plan),
// every float tensor's gradient, and where this op's parameter gradients go.
struct BackwardContext {
  RunContext ctx;
  const std::vector<uint8_t*>* gradients = nullptr;  // gradient of every float tensor (nullptr where none flows)
  // Per input (op_io order): compute its gradient, and whether to add it to what is
  // there already (another reader of that tensor wrote first) or to overwrite.
  const std::vector<char>* want_input = nullptr;
  const std::vector<char>* accumulate_input = nullptr;
  // The op's parameter gradients (OpDef::parameters order; nullptr for an absent
  // weight), each accumulated into; empty: parameter gradients are not wanted.
  const std::vector<float*>* parameter_gradients = nullptr;
  float* grad(int tensor) const { return reinterpret_cast<float*>((*gradients)[static_cast<size_t>(tensor)]); }
  bool wants(size_t input) const { return (*want_input)[input] != 0; }
  bool accumulates(size_t input) const { return (*accumulate_input)[input] != 0; }
  bool wants_parameters() const { return parameter_gradients != nullptr && !parameter_gradients->empty(); }
  float* parameter_gradient(size_t k) const { return (*parameter_gradients)[k]; }
};

// An op prepared for execution: weights bound, algorithm chosen, scratch sized before the first run.
class OpKernel {
 public:
  virtual ~OpKernel() = default;
  virtual const char* kernel_name() const = 0;  // e.g. "conv_transpose2d_split"
  virtual uint64_t workspace_bytes() const { return 0; }
  virtual uint64_t repacked_weight_bytes() const { return 0; }  // weight copies the kernel owns
  virtual uint64_t macs() const { return 0; }                   // multiply-accumulates of one run
  // Weight bytes one run reads, for the traffic estimate (default: every stored byte).
  virtual uint64_t weight_bytes_read(uint64_t stored_bytes) const { return stored_bytes; }
  // Output shares the input's buffer: no data movement at all (a Reshape that keeps order).
  virtual bool output_aliases_input() const { return false; }
  // Output may overwrite the input element by element (activations, affine): inference only.
  virtual bool works_in_place() const { return false; }
  virtual int in_place_input() const { return -1; }
  // An fp16 session on the CPU: the kernel reads its float inputs and writes its float
  // output as the arena's halves itself (a native route, half_route.h), so the backend
  // does not wrap it in the half-storage adapter. Only a kernel built for
  // KernelArgs::precision kFp16 says so.
  virtual bool stores_halves() const { return false; }
  virtual void run(const RunContext& ctx) = 0;
  // After a run has finished (the stream synchronised): reports, as an Error, a fault
  // the device found in the inputs during run() (e.g. a label outside the table).
  virtual void check_run() {}

  // ---- training
  // The weights it reads changed (an optimizer step): re-derive any copy made from them.
  virtual void weights_changed() {}
  virtual uint64_t backward_workspace_bytes() const { return 0; }
  // Gradients of the inputs and parameters from the output's gradient. The output's
  // gradient may be overwritten (nothing reads it after its producer's backward).
  virtual void backward(const BackwardContext& ctx) = 0;
};

// A trainable weight buffer of an op.
struct ParameterSlot {
  std::string name;  // "weights", "bias", "phase (1,0) weights", ...
  uint32_t buffer = 0;  // 0: absent (an op without a bias)
};

class OpDef {
 public:
  virtual ~OpDef() = default;
  virtual const char* name() const = 0;  // as in the schema: "ConvTranspose2D"
  // The tensors it reads, in order, and the one it writes (on a validated op).
  virtual std::vector<int> inputs(const schema::Op& op) const = 0;
  virtual int output(const schema::Op& op) const = 0;
  // Checks one op of a file being loaded (its inputs already defined, its output not);
  // fails through the validator with a message naming the defect.
  virtual void validate(const schema::Op& op, OpValidator& v) const = 0;
  // `inspect`'s view: attributes text, weight bytes, phases.
  virtual void describe(const Model::Impl& model, const schema::Op& op, OpInfo& info) const = 0;
  // Its trainable weights, in the order its kernel's backward writes their gradients.
  virtual std::vector<ParameterSlot> parameters(const schema::Op& op) const = 0;
  // Its CPU kernel (every op has one; other backends register their own).
  virtual std::unique_ptr<OpKernel> create_cpu_kernel(const KernelArgs& args) const = 0;
};

// Specialised once per kind, in that op's file.
template <schema::OpKind Kind>
const OpDef& op_definition();

// The definition of a kind (throws Error for a value outside the schema's kinds).
const OpDef& op_def(schema::OpKind kind);
inline const OpDef& op_def(const schema::Op& op) { return op_def(op.kind_type()); }

// "op 3 'name'", for messages.
std::string op_label(const schema::Op& op, int index);

}  // namespace edgegan
