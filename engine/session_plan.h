// How a session runs a model: one kernel per op from its backend, and the arena plan
// (every tensor's and every scratch's buffer, offset and lifetime). Sessions execute
// it; memory reports are computed from it without allocating the arena, so the
// report's numbers are the session's numbers. A Trainer runs the same plan built for
// training: the same kernels, every value kept until its backward reads it, and each
// tensor's gradient and each op's backward scratch planned into the same arena.
#pragma once

#include <memory>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/memory_planner.h"
#include "engine/memory_tracker.h"
#include "engine/model_impl.h"
#include "engine/ops/op_def.h"

namespace edgegan {

struct PlanOptions {
  int64_t batch = 1;
  int threads = 1;  // resolved (session_threads)
  ConvTranspose2DAlgo conv_transpose2d_algo = ConvTranspose2DAlgo::kSplit;
  Precision precision = Precision::kFp32;  // SessionOptions::precision
  bool training = false;
  bool zero_insert_backward = false;  // training: the transposed convolutions' backward baseline
  // fp16: per tensor, kept as fp32 (a layer whose output overflowed the half range; the
  // session marks it and plans again). Empty: none.
  std::vector<char> fp32_tensors;
};

struct SessionPlan {
  int64_t batch = 1;
  Precision precision = Precision::kFp32;  // fp16: the arena's float tensors are halves
  std::vector<char> fp32_tensors;          // ... except these (PlanOptions::fp32_tensors, with the aliases of them)
  std::vector<std::unique_ptr<OpKernel>> kernels;
  std::vector<std::vector<int>> op_inputs;  // per op, the tensors it reads (OpDef::inputs)
  std::vector<int> op_output;               // per op, the tensor it writes
  std::vector<PlannedBuffer> buffers;
  std::vector<int> tensor_buffer;     // buffer of every tensor
  std::vector<int> workspace_buffer;  // buffer of every op's scratch, -1 for none
  uint64_t arena_bytes = 0;
  uint64_t session_weight_bytes = 0;  // weight copies the kernels own

  // ---- training plans only
  std::vector<int> gradient_buffer;            // per tensor, -1 where no gradient flows (int64 tensors)
  std::vector<int> backward_workspace_buffer;  // per op, -1 for none
  std::vector<std::vector<char>> accumulate;   // per op and input: add to a gradient another reader wrote
  std::vector<int> unwritten_gradients;        // float tensors no op writes a gradient into (zeroed per pass)
};

// Builds every kernel through `backend` (refusing, with the op named, a model with an
// op it lacks) and plans the arena. `weights` are what the kernels read (the model
// itself, or a Trainer's copies); `tracker` receives the kernels' weight copies, and
// nullptr plans without making them.
SessionPlan build_session_plan(const Model::Impl& model, const ComputeBackend& backend, const PlanOptions& options,
                               const WeightSource& weights, MemoryTracker* tracker);

// Bytes of tensor `d` at `batch` in a session of `precision`: an fp16 session keeps its
// float activations as halves; int64 tensors keep their 8 bytes.
uint64_t tensor_bytes(const TensorDesc& d, int64_t batch, Precision precision);
// The same for tensor t of a plan (its fp32 tensors at 4 bytes).
uint64_t tensor_bytes(const Model::Impl& model, const SessionPlan& plan, int t);
// Whether tensor t of a plan is stored as halves.
bool stored_as_halves(const Model::Impl& model, const SessionPlan& plan, int t);

// Throws Error ("<caller>: <why>") when `backend` cannot run `precision`.
void check_precision(const ComputeBackend& backend, Precision precision, bool planning, const char* caller);

// The threads a session with SessionOptions::threads == `requested` runs on: that
// number, or for 0 OpenMP's default (all cores); 1 in builds without OpenMP.
int session_threads(int requested);

}  // namespace edgegan
