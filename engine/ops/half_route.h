// What a native half-storage route shares with the adapter (engine/backend/cpu_half_storage.h).
// In an fp16 session on the CPU the arena holds float tensors as halves; a CPU kernel
// created with KernelArgs::precision kFp16 may read and write those halves itself
// (widening in registers, arithmetic in fp32, narrowing its output) and say so with
// OpKernel::stores_halves(), so the backend does not wrap it. Its output's overflow past
// the half range is reported as the adapter reports it, by HalfOverflow.
#pragma once

#include <string>

#include "engine/ops/op_def.h"

namespace edgegan {

// Whether a kernel being built runs on halves (an fp16 plan on the CPU).
inline bool half_storage(const KernelArgs& args) { return args.precision == Precision::kFp16; }

// What HalfOverflow::check throws: the session catches it to store that layer's output
// as fp32 (the executor sets `tensor`, the op's output) and run the call again.
class HalfOverflowError : public Error {
 public:
  HalfOverflowError(const std::string& what, std::string layer) : Error(what), layer(std::move(layer)) {}
  std::string layer;  // "op 'name' (Kind)"
  int tensor = -1;
};

// One layer's overflow flag: set by a run whose narrowing made a finite float infinite,
// reported by check() in one line naming the layer.
class HalfOverflow {
 public:
  HalfOverflow(const OpDef& def, const schema::Op& op)
      : label_(std::string("op '") + (op.name() ? op.name()->str() : "") + "' (" + def.name() + ")") {}
  const std::string& label() const { return label_; }
  // A run starts clear (a fault another kernel reported first may have left it set).
  void clear() { overflowed_ = false; }
  void add(bool overflowed) { overflowed_ = overflowed_ || overflowed; }
  void check() const {
    if (overflowed_)
      throw HalfOverflowError(label_ + ": its output has values past the half range (|x| > 65504) at precision fp16; run this model at fp32", label_);
  }

 private:
  std::string label_;
  bool overflowed_ = false;
};

}  // namespace edgegan
