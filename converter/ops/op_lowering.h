// What the converter knows about one kind of engine op, in one place per kind
// (converter/ops/<op>.cpp, named as the engine's engine/ops/<op>.cpp): the ONNX op
// types it takes, the output shape of such a node computed at run time, its
// lowering into the IR (an op of this kind, or fused into the node's producer),
// and the IR op written as the schema's table.
//
// Like the engine's op definitions, each kind specialises op_lowering<Kind>() in
// its own file and the registry builds its table from the schema's kinds: a kind
// without a lowering fails the link.
#pragma once

#include <string>
#include <vector>

#include "converter/egan_ir.h"
#include "converter/onnx_graph.h"
#include "egan_generated.h"

namespace edgegan::converter {

class Lowering;    // lowering.h
class EganWriter;  // egan_writer.h

// What an op's epilogue can absorb from the node that reads its output, so that
// node costs no pass of its own. Each kind declares its own (default: nothing);
// the converter's fusion passes ask the producer's kind through
// Lowering::fusable_producer.
enum class Fusion {
  kActivation,  // an invertible activation (Relu, LeakyRelu, Sigmoid, Tanh ...)
  kScaleShift,  // a per-output-channel scale and shift: BatchNorm, a constant Mul / Add
  kResidual,    // an Add of another tensor of the output's shape
  kPRelu,       // a PRelu with constant positive slopes (one, or one per output channel)
};

struct EpilogueFusions {
  bool activation = false, scale_shift = false, residual = false, prelu = false;
  bool takes(Fusion f) const {
    switch (f) {
      case Fusion::kPRelu: return prelu;
      case Fusion::kActivation: return activation;
      case Fusion::kScaleShift: return scale_shift;
      case Fusion::kResidual: return residual;
    }
    return false;
  }
};

class OpLowering {
 public:
  virtual ~OpLowering() = default;
  // The ONNX op types this kind lowers, when computed at run time (constant ones are folded).
  virtual std::vector<std::string> onnx_ops() const = 0;
  // Checks a run-time node's attributes and inputs, and sets its output's shape.
  virtual void infer(RuntimeNode& node) const = 0;
  // Adds the node to the IR: an op of this kind, or fused into its producer.
  virtual void lower(const Node& node, Lowering& lowering) const = 0;
  // Writes an IR op of this kind as the schema's table.
  virtual flatbuffers::Offset<schema::Op> write(const IrModel& model, const IrOp& op, EganWriter& writer) const = 0;

  // What this kind's epilogue can take from the node reading its output (above).
  virtual EpilogueFusions epilogue_fusions() const { return {}; }

  // ---- kinds that take kScaleShift
  // Output channels, and the output channel that ONNX-layout weight k belongs to.
  virtual int64_t output_channels(const IrOp& op) const { return static_cast<int64_t>(op.bias.size()); }
  virtual int64_t output_channel_of_weight(const IrOp& op, int64_t k) const { return k % output_channels(op); }
};

template <schema::OpKind Kind>
const OpLowering& op_lowering();

const OpLowering& op_lowering(schema::OpKind kind);
// The lowering that takes an ONNX op type, or nullptr when no kind does.
const OpLowering* lowering_of_onnx(const std::string& onnx_op);

}  // namespace edgegan::converter
