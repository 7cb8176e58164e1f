// Runs a SessionPlan on its backend: the arena (one allocation, at construction),
// every tensor's address in it, its own stream on the backend, and the forward and
// backward passes over the kernels. Session and Trainer are thin layers over it, so
// both run the same kernels on the same plan; after construction, a pass allocates
// nothing. A forward pass without timings is recorded once and replayed (a CUDA
// graph on the GPU: one launch per run).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/session_plan.h"

namespace edgegan {

// What a forward pass may do besides running the plan's kernels (ImageToImage's tiles
// with whole-picture statistics, engine/session_core.h): run another kernel in an op's
// place, stop before an op, and look at the arena before an op runs.
struct ForwardHooks {
  const std::vector<OpKernel*>* substitutes = nullptr;  // per op: run this instead (nullptr: the plan's kernel)
  size_t stop = SIZE_MAX;                               // ops from this one on do not run
  std::function<void(size_t op)> before;                // called before each op that runs
};

class Executor {
 public:
  Executor(const Model::Impl& model, const ComputeBackend& backend, SessionPlan plan, MemoryTracker& tracker, int threads);

  const SessionPlan& plan() const { return plan_; }
  const ComputeBackend& backend() const { return backend_; }
  SessionPlan& plan() { return plan_; }
  int64_t batch() const { return batch_; }

  // Copies the callers' tensors (bind_inputs order) into the graph inputs (rounded to
  // halves in an fp16 plan).
  void write_inputs(const std::vector<const Tensor*>& bound);
  // Runs every op; with `timings`, one entry per op (the clock is read between ops only).
  // With hooks, the pass is not recorded for replay (it may differ from run to run).
  void forward(std::vector<OpTiming>* timings = nullptr, const ForwardHooks* hooks = nullptr);
  // Tensor t's current value, batch x per-sample floats (widened from halves in an fp16
  // plan), copied to `host`; elements(t) floats.
  void read_tensor(int t, float* host) const;
  uint64_t elements(int tensor) const;
  // Graph output i, batch x per-sample floats, copied to `host` (widened from halves in
  // an fp16 plan).
  void read_output(size_t i, float* host) const;
  uint64_t output_floats(size_t i) const;

  // ---- training plans
  // Gradient of graph output i: copied in (or, for a tensor listed as two outputs, added).
  void write_output_gradient(size_t i, const float* host, bool add);
  // Runs every op's backward in reverse. `want_gradient` per tensor: false for graph
  // inputs whose gradient nobody reads. `parameter_gradients` per op (OpDef::parameters
  // order), or empty for a pass that leaves parameter gradients alone.
  void backward(const std::vector<char>& want_gradient, const std::vector<std::vector<float*>>& parameter_gradients);
  void read_gradient(int tensor, float* host) const;
  // Ops whose weights changed since their kernels were built (an optimizer step).
  void weights_changed(int op);

 private:
  uint8_t* address(int buffer) const { return buffer < 0 ? nullptr : arena_->data() + plan_.buffers[static_cast<size_t>(buffer)].offset; }
  uint64_t tensor_bytes(int tensor) const;  // in the arena
  bool stored_as_halves(int tensor) const;

  const Model::Impl& m_;
  const ComputeBackend& backend_;
  std::unique_ptr<BackendStream> stream_;
  SessionPlan plan_;
  int64_t batch_;
  int threads_;
  std::unique_ptr<DeviceBuffer> arena_;
  std::vector<uint8_t*> values_, gradients_;
  // An fp16 plan's host halves of the largest float input or output, so that the
  // conversions allocate nothing per run.
  mutable std::vector<uint16_t> halves_;
  // Per-op flags of a backward pass, kept so that passes allocate nothing.
  std::vector<std::vector<char>> want_input_;
  const std::vector<float*> no_parameters_;
};

}  // namespace edgegan
