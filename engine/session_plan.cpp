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

uint64_t tensor_bytes(const TensorDesc& d, int64_t batch, Precision precision) {
  const uint64_t element = d.dtype == DType::kFloat32 && precision == Precision::kFp16 ? 2 : d.element_size();
  return static_cast<uint64_t>(batch) * static_cast<uint64_t>(d.per_sample) * element;
}

bool stored_as_halves(const Model::Impl& m, const SessionPlan& plan, int t) {
  const size_t i = static_cast<size_t>(t);
  return plan.precision == Precision::kFp16 && m.tensors[i].dtype == DType::kFloat32 && !(i < plan.fp32_tensors.size() && plan.fp32_tensors[i]);
}

uint64_t tensor_bytes(const Model::Impl& m, const SessionPlan& plan, int t) {
  const size_t i = static_cast<size_t>(t);
  const bool fp32 = i < plan.fp32_tensors.size() && plan.fp32_tensors[i];
  return tensor_bytes(m.tensors[i], plan.batch, fp32 ? Precision::kFp32 : plan.precision);
}

void check_precision(const ComputeBackend& backend, Precision precision, bool planning, const char* caller) {
  const std::string why = backend.precision_refusal(precision, planning);
  if (!why.empty()) throw Error(std::string(caller) + ": " + why);
}

namespace {

constexpr int64_t kFilterCopyBudgetBytes = int64_t{32} << 20;

// Backward runs the ops in reverse and, within an op, its inputs in order. The first
// gradient written into a tensor overwrites (no pass clears gradients up front); every
// later one adds. A graph output's gradient is seeded by the caller, so every op adds.
std::vector<std::vector<char>> gradient_accumulation(const Model::Impl& m, const std::vector<std::vector<int>>& op_inputs) {
  std::vector<char> written(m.tensors.size(), 0);
  for (int t : m.output_tensors) written[static_cast<size_t>(t)] = 1;
  std::vector<std::vector<char>> accumulate(op_inputs.size());
  for (size_t i = op_inputs.size(); i-- > 0;) {
    for (int t : op_inputs[i]) {
      accumulate[i].push_back(written[static_cast<size_t>(t)]);
      written[static_cast<size_t>(t)] = 1;
    }
  }
  return accumulate;
}

}  // namespace

SessionPlan build_session_plan(const Model::Impl& m, const ComputeBackend& backend, const PlanOptions& options, const WeightSource& weights,
                               MemoryTracker* tracker) {
  // Backward kernels read and write floats; half storage is inference only.
  if (options.training && options.precision != Precision::kFp32) throw Error(std::string("trainer: training runs fp32 only, not ") + to_string(options.precision));
  SessionPlan plan;
  plan.batch = options.batch;
  plan.precision = options.precision;
  if (!options.fp32_tensors.empty()) plan.fp32_tensors = options.fp32_tensors;
  plan.fp32_tensors.resize(m.tensors.size(), 0);
  const auto& ops = *m.root->ops();
  const int n_ops = static_cast<int>(ops.size());
  const size_t n_tensors = m.tensors.size();
  for (int i = 0; i < n_ops; ++i) {
    const schema::Op& op = *ops.Get(static_cast<uint32_t>(i));
    const OpDef& def = op_def(op);
    plan.op_inputs.push_back(def.inputs(op));
    plan.op_output.push_back(def.output(op));
  }
  if (options.training) plan.accumulate = gradient_accumulation(m, plan.op_inputs);
  // Kept Winograd filters are 4x their weights: ESRGAN's 90 convolutions kept 68 MiB of
  // them (peak RSS 125 MiB). Past this much, layers make theirs in each run (5-8% of
  // such a layer's time at 256 windows), in graph order.
  int64_t filter_copy_budget = kFilterCopyBudgetBytes;
  for (int i = 0; i < n_ops; ++i) {
    const schema::Op& op = *ops.Get(static_cast<uint32_t>(i));
    const OpDef& def = op_def(op);
    const KernelArgs args{.model = m,
                          .op = op,
                          .weights = weights,
                          .batch = options.batch,
                          .threads = options.threads,
                          .conv_transpose2d_algo = options.conv_transpose2d_algo,
                          .precision = options.precision,
                          .tracker = tracker,
                          .filter_copy_budget = &filter_copy_budget,
                          .training = options.training,
                          .accumulate_input = options.training ? plan.accumulate[static_cast<size_t>(i)] : std::vector<char>{},
                          .zero_insert_backward = options.zero_insert_backward,
                          .fp32_tensors = &plan.fp32_tensors};
    std::string why;
    if (!backend.supports(args, &why))
      throw Error("session: the " + std::string(backend.name()) + " backend cannot run " + op_label(op, i) + " (" + def.name() + "): " + why);
    plan.kernels.push_back(backend.create_kernel(def, args));
    // A view of an fp32 tensor (a Reshape that keeps the order) is fp32 too.
    const auto& inputs = plan.op_inputs[static_cast<size_t>(i)];
    if (plan.kernels.back()->output_aliases_input() && !inputs.empty() && plan.fp32_tensors[static_cast<size_t>(inputs[0])])
      plan.fp32_tensors[static_cast<size_t>(plan.op_output[static_cast<size_t>(i)])] = 1;
    plan.session_weight_bytes += plan.kernels.back()->repacked_weight_bytes();
  }
  auto tensor_bytes = [&](int t) { return edgegan::tensor_bytes(m, plan, t); };
  // Steps: op i runs forward at step i; in a training plan its backward runs at step
  // 2n-1-i, and step 2n is the caller reading the input gradients.
  auto backward_step = [&](int op) { return 2 * n_ops - 1 - op; };

  // Last step at which each tensor's value is read.
  std::vector<int> last_use(n_tensors, -1);
  for (int i = 0; i < n_ops; ++i)
    for (int t : plan.op_inputs[static_cast<size_t>(i)]) {
      int& last = last_use[static_cast<size_t>(t)];
      last = std::max(last, options.training ? backward_step(i) : i);  // backward reads the inputs again
    }
  for (int t : m.output_tensors) last_use[static_cast<size_t>(t)] = std::max(last_use[static_cast<size_t>(t)], n_ops - 1);
  if (options.training)  // an op's backward reads its own output (the activation's gradient)
    for (int i = 0; i < n_ops; ++i) {
      int& last = last_use[static_cast<size_t>(plan.op_output[static_cast<size_t>(i)])];
      last = std::max(last, backward_step(i));
    }

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
    const int out = plan.op_output[static_cast<size_t>(i)];
    const int out_last = last_use[static_cast<size_t>(out)];
    int shared = -1;
    if (k.output_aliases_input()) {
      shared = plan.tensor_buffer[static_cast<size_t>(plan.op_inputs[static_cast<size_t>(i)][0])];
    } else if (k.works_in_place() && !options.training &&
               plan.fp32_tensors[static_cast<size_t>(k.in_place_input())] == plan.fp32_tensors[static_cast<size_t>(out)]) {
      // Overwrite the input only if nothing reads it after this op (training keeps every
      // value), and only where both are stored alike (not halves into an fp32 tensor).
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

  if (options.training) {
    // A float tensor's gradient lives from the backward step of its last reader (or the
    // start of backward, for a graph output or a tensor nobody reads) to its producer's
    // backward step (or the end, for a graph input, whose gradient the caller reads).
    std::vector<int> first(n_tensors, n_ops), last(n_tensors, 2 * n_ops), readers(n_tensors, 0);
    for (int i = 0; i < n_ops; ++i)
      for (int t : plan.op_inputs[static_cast<size_t>(i)]) {
        ++readers[static_cast<size_t>(t)];
        first[static_cast<size_t>(t)] = std::min(first[static_cast<size_t>(t)], backward_step(i));
      }
    for (int i = 0; i < n_ops; ++i) last[static_cast<size_t>(plan.op_output[static_cast<size_t>(i)])] = backward_step(i);
    for (int t : m.output_tensors) first[static_cast<size_t>(t)] = n_ops;
    plan.gradient_buffer.assign(n_tensors, -1);
    for (size_t t = 0; t < n_tensors; ++t) {
      if (m.tensors[t].dtype != DType::kFloat32) continue;
      plan.gradient_buffer[t] = new_buffer(tensor_bytes(static_cast<int>(t)), first[t], last[t]);
      const bool output = std::find(m.output_tensors.begin(), m.output_tensors.end(), static_cast<int>(t)) != m.output_tensors.end();
      if (readers[t] == 0 && !output) plan.unwritten_gradients.push_back(static_cast<int>(t));
    }
    plan.backward_workspace_buffer.assign(static_cast<size_t>(n_ops), -1);
    for (int i = 0; i < n_ops; ++i) {
      const uint64_t bytes = plan.kernels[static_cast<size_t>(i)]->backward_workspace_bytes();
      if (bytes > 0) plan.backward_workspace_buffer[static_cast<size_t>(i)] = new_buffer(bytes, backward_step(i), backward_step(i));
    }
  }
  plan.arena_bytes = plan_arena(buffers, kWeightAlignment);
  return plan;
}

}  // namespace edgegan
