#include "engine/session_plan.h"

#include <algorithm>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace edgegan {

int session_threads(int requested) {
#ifdef _OPENMP
  return requested > 0 ? requested : std::max(1, omp_get_max_threads());
#else
  (void)requested;
  return 1;  // built without OpenMP (sanitizer and fuzz builds)
#endif
}

SessionPlan build_session_plan(const Model::Impl& m, ConvTransposeAlgo algo, int64_t batch, int threads, MemoryTracker* tracker) {
  SessionPlan plan;
  const auto& ops = *m.root->ops();
  const int n_ops = static_cast<int>(ops.size());
  const size_t n_tensors = m.tensors.size();
  for (const auto* op : ops) {
    plan.kernels.push_back(create_cpu_op(m, *op, algo, batch, threads, tracker));
    plan.session_weight_bytes += plan.kernels.back()->repacked_weight_bytes();
  }
  auto tensor_bytes = [&](int t) {
    const TensorDesc& d = m.tensors[static_cast<size_t>(t)];
    return static_cast<uint64_t>(batch) * static_cast<uint64_t>(d.per_sample) * d.element_size();
  };

  // Last step at which each tensor is read; graph outputs live to the end.
  std::vector<int> last_use(n_tensors, -1);
  for (int i = 0; i < n_ops; ++i)
    for (int t : op_inputs(*ops.Get(static_cast<uint32_t>(i)))) last_use[static_cast<size_t>(t)] = i;
  for (int t : m.output_tensors) last_use[static_cast<size_t>(t)] = n_ops - 1;

  auto& buffers = plan.buffers;
  plan.tensor_buffer.assign(n_tensors, -1);
  auto new_buffer = [&](uint64_t size, int first, int last) {
    buffers.push_back({size, first, std::max(first, last), 0});
    return static_cast<int>(buffers.size()) - 1;
  };
  // Graph inputs are written before op 0 runs.
  for (int t : m.input_tensors) plan.tensor_buffer[static_cast<size_t>(t)] = new_buffer(tensor_bytes(t), 0, last_use[static_cast<size_t>(t)]);

  plan.workspace_buffer.assign(static_cast<size_t>(n_ops), -1);
  for (int i = 0; i < n_ops; ++i) {
    const OpKernel& k = *plan.kernels[static_cast<size_t>(i)];
    const auto* op = ops.Get(static_cast<uint32_t>(i));
    const int out = op_output(*op);
    const int out_last = last_use[static_cast<size_t>(out)];
    int shared = -1;
    if (k.output_aliases_input()) {
      shared = plan.tensor_buffer[static_cast<size_t>(op_inputs(*op)[0])];
    } else if (k.works_in_place()) {
      // Overwrite the input only if nothing reads it after this op.
      const int b = plan.tensor_buffer[static_cast<size_t>(k.in_place_input())];
      if (buffers[static_cast<size_t>(b)].last_step <= i) shared = b;
    }
    if (shared >= 0) {
      auto& b = buffers[static_cast<size_t>(shared)];
      b.last_step = std::max(b.last_step, out_last);
      plan.tensor_buffer[static_cast<size_t>(out)] = shared;
    } else {
      plan.tensor_buffer[static_cast<size_t>(out)] = new_buffer(tensor_bytes(out), i, out_last);
    }
    // Scratch is requested here, before the first run, so the arena holds it.
    if (k.workspace_bytes() > 0) plan.workspace_buffer[static_cast<size_t>(i)] = new_buffer(k.workspace_bytes(), i, i);
  }
  plan.arena_bytes = plan_arena(buffers, kWeightAlignment);
  return plan;
}

}  // namespace edgegan
