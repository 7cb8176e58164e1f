// What a Session is inside the engine: the model, its plan on a backend, the executor,
// and a forward pass that recovers from an fp16 overflow (the layer's output kept as fp32
// and the plan made again). Session is this behind the public API; ImageToImage's tiles
// drive it directly for what the public API does not offer: whole-picture statistics
// fixed per op (frozen_statistics.h), passes that stop before an op, and reading a
// tensor of the arena.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/executor.h"
#include "engine/frozen_statistics.h"
#include "engine/ops/half_route.h"
#include "engine/session_plan.h"

namespace edgegan {

class SessionCore {
 public:
  // Throws Error for bad options, a backend that cannot run the model, or a plan over the limits.
  SessionCore(std::shared_ptr<const Model> model, const SessionOptions& options);

  const Model::Impl& m() const { return model_->impl(); }
  const Model& model() const { return *model_; }
  const SessionOptions& options() const { return options_; }
  int threads() const { return threads_; }
  const ComputeBackend& backend() const { return *backend_; }
  const std::string& weight_placement() const { return weight_placement_; }
  const Executor& executor() const { return *executor_; }
  const MemoryTracker& tracker() const { return tracker_; }

  // The graph on `inputs` (bind_inputs' checks; `caller` names the refusals). With
  // `stop`, ops from that one on do not run; `before(op)` is called before each op that
  // runs (it may read_tensor what the op is about to read).
  void forward(const std::vector<Tensor>& inputs, std::vector<OpTiming>* timings, const char* caller, size_t stop = SIZE_MAX,
               const std::function<void(size_t op)>& before = {});
  std::vector<Tensor> outputs() const;
  // Tensor t's current value as floats, [batch, per-sample...] (its dims, batch first).
  void read_tensor(int t, Tensor& out) const;

  // Op `op`'s whole-map statistics fixed for the next passes: `values` (batch x the
  // layer's floats_per_sample, frozen_statistics.h) replace what the op would compute from
  // its input; empty: it computes its own again. CPU backend only. Throws Error for an op
  // without such statistics or values of another size.
  void freeze_statistics(int op, const std::vector<float>& values);

 private:
  bool keep_output_fp32(const HalfOverflowError& e);
  void make_executor();

  std::shared_ptr<const Model> model_;
  SessionOptions options_;
  int threads_ = 1;
  const ComputeBackend* backend_ = nullptr;
  std::string weight_placement_;  // as it was when the kernels were built
  PlanOptions plan_options_;      // fp16 on the CPU: with the tensors kept as fp32 so far
  MemoryTracker tracker_;         // declared before everything it accounts for
  std::unique_ptr<Executor> executor_;
  // Per op (sized on the first freeze): the frozen values and the kernel that uses them,
  // made for the executor's plan (made again with it).
  std::vector<std::vector<float>> frozen_values_;
  std::vector<std::unique_ptr<FrozenStatisticsKernel>> frozen_kernels_;
  std::vector<OpKernel*> substitutes_;
};

}  // namespace edgegan
