// How a session will run a model at a given batch and algorithm: one kernel per
// op, and the arena plan (every tensor's and every workspace's buffer, offset
// and lifetime). Sessions execute it; memory reports are computed from it, for
// every algorithm, without allocating the arena — so the report's numbers are
// the session's numbers.
#pragma once

#include <memory>
#include <vector>

#include "engine/memory_planner.h"
#include "engine/memory_tracker.h"
#include "engine/model_impl.h"
#include "engine/ops/op_kernel.h"

namespace edgegan {

struct SessionPlan {
  std::vector<std::unique_ptr<OpKernel>> kernels;
  std::vector<PlannedBuffer> buffers;
  std::vector<int> tensor_buffer;     // buffer of every tensor
  std::vector<int> workspace_buffer;  // buffer of every op's scratch, -1 for none
  uint64_t arena_bytes = 0;
  uint64_t session_weight_bytes = 0;  // weight copies the kernels own (baselines only)
};

// `tracker` receives the kernels' weight copies; nullptr plans without making them.
// `threads` is the session's resolved thread count (session_threads).
SessionPlan build_session_plan(const Model::Impl& model, ConvTransposeAlgo algo, int64_t batch, int threads, MemoryTracker* tracker);

// The threads a session with SessionOptions::threads == `requested` runs on: that
// number, or for 0 OpenMP's default (all cores); 1 in builds without OpenMP.
int session_threads(int requested);

}  // namespace edgegan
