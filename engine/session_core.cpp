#include "engine/session_core.h"

#include <algorithm>
#include <cstdio>

#include "engine/input_binding.h"
#include "engine/ops/half_route.h"

namespace edgegan {
namespace {

constexpr int kMaxBatch = 1 << 16;

// Refuses a plan over the memory or compute limit, naming what dominates it.
void check_limits(const Model::Impl& m, const SessionPlan& plan, const SessionOptions& options, uint64_t mapped_weights) {
  const auto& ops = *m.root->ops();
  auto op_name = [&](size_t i) { return op_label(*ops.Get(static_cast<uint32_t>(i)), static_cast<int>(i)); };
  const uint64_t total = plan.arena_bytes > UINT64_MAX / 2 ? UINT64_MAX : plan.arena_bytes + plan.session_weight_bytes + mapped_weights;
  if (total > options.memory_limit_bytes) {
    // The largest single buffer says where the memory goes.
    std::string largest;
    uint64_t largest_bytes = 0;
    for (size_t t = 0; t < plan.tensor_buffer.size(); ++t) {
      const uint64_t b = plan.buffers[static_cast<size_t>(plan.tensor_buffer[t])].size;
      if (b > largest_bytes) largest_bytes = b, largest = "tensor '" + m.tensors[t].name + "'";
    }
    for (size_t i = 0; i < plan.workspace_buffer.size(); ++i)
      if (plan.workspace_buffer[i] >= 0 && plan.buffers[static_cast<size_t>(plan.workspace_buffer[i])].size > largest_bytes) {
        largest_bytes = plan.buffers[static_cast<size_t>(plan.workspace_buffer[i])].size;
        largest = "the workspace of " + op_name(i);
      }
    throw Error("session: the model needs " + std::to_string(total) + " bytes at batch " + std::to_string(options.batch) + " (arena " +
                std::to_string(plan.arena_bytes) + ", weight copies " + std::to_string(plan.session_weight_bytes) + ", mapped weights " +
                std::to_string(mapped_weights) + "), over the memory limit of " + std::to_string(options.memory_limit_bytes) +
                " bytes; the largest buffer is " + largest + " (" + std::to_string(largest_bytes) + " bytes)");
  }
  uint64_t macs = 0, largest_macs = 0;
  size_t largest_op = 0;
  for (size_t i = 0; i < plan.kernels.size(); ++i) {
    const uint64_t k = plan.kernels[i]->macs();
    macs = macs > UINT64_MAX - k ? UINT64_MAX : macs + k;
    if (k > largest_macs) largest_macs = k, largest_op = i;
  }
  if (macs > options.compute_limit_macs)
    throw Error("session: one run needs " + std::to_string(macs) + " multiply-accumulates, over the compute limit of " +
                std::to_string(options.compute_limit_macs) + "; the largest is " + op_name(largest_op) + " (" + std::to_string(largest_macs) + ")");
}

}  // namespace

SessionCore::SessionCore(std::shared_ptr<const Model> model, const SessionOptions& options) : model_(std::move(model)), options_(options) {
  if (!model_) throw Error("session: no model");
  if (options.batch < 1 || options.batch > kMaxBatch)
    throw Error("session: batch " + std::to_string(options.batch) + " is outside 1.." + std::to_string(kMaxBatch));
  if (options.threads < 0 || options.threads > 1024)
    throw Error("session: threads " + std::to_string(options.threads) + " is outside 0..1024 (0 = all cores)");
  cpu_kernel_family();  // settles the kernel family: a bad EDGEGAN_ISA is an Error here, not inside a kernel
  threads_ = session_threads(options.threads);
  backend_ = &compute_backend(options.backend, "session", options.device);
  check_precision(*backend_, options.precision, /*planning=*/false, "session");
  plan_options_.batch = options.batch;
  plan_options_.threads = threads_;
  plan_options_.conv_transpose2d_algo = options.conv_transpose2d_algo;
  plan_options_.precision = options.precision;
  // Limits are checked on a dry plan (nothing allocated), then the real one is built.
  check_limits(m(), build_session_plan(m(), *backend_, plan_options_, m(), nullptr), options, model_->weight_bytes());
  weight_placement_ = backend_->weight_placement();
  make_executor();
}

void SessionCore::make_executor() {
  executor_ = std::make_unique<Executor>(m(), *backend_, build_session_plan(m(), *backend_, plan_options_, m(), &tracker_), tracker_, threads_);
  // The frozen kernels follow the plan (an fp16 plan's tensors kept as fp32).
  for (size_t i = 0; i < frozen_kernels_.size(); ++i) frozen_kernels_[i].reset();
  for (size_t i = 0; i < frozen_values_.size(); ++i)
    if (!frozen_values_[i].empty()) freeze_statistics(static_cast<int>(i), std::vector<float>(frozen_values_[i]));
}

// fp16 on the CPU: a layer whose output overflowed the half range has that tensor kept
// as fp32 from now on. The plan is made again with it marked (over the memory limit:
// the overflow stands, the session unchanged), and replaces the old one once it is
// made (a failure leaves the session as it was); false where the error is not one to
// recover from.
bool SessionCore::keep_output_fp32(const HalfOverflowError& e) {
  const size_t t = static_cast<size_t>(e.tensor);
  std::vector<char>& fp32 = plan_options_.fp32_tensors;
  if (e.tensor < 0 || options_.backend != Backend::kCpu || (t < fp32.size() && fp32[t])) return false;
  fp32.resize(m().tensors.size(), 0);
  fp32[t] = 1;
  try {
    check_limits(m(), build_session_plan(m(), *backend_, plan_options_, m(), nullptr), options_, model_->weight_bytes());
  } catch (const Error&) {
    fp32[t] = 0;
    return false;
  }
  try {
    make_executor();
  } catch (...) {
    fp32[t] = 0;
    throw;
  }
  const std::string notice = e.layer + ": its output is past the half range at fp16; kept as fp32 from now on";
  if (options_.on_notice) {
    options_.on_notice(notice);
  } else {
    std::fprintf(stderr, "edgegan: %s\n", notice.c_str());
  }
  return true;
}

void SessionCore::forward(const std::vector<Tensor>& inputs, std::vector<OpTiming>* timings, const char* caller, size_t stop,
                          const std::function<void(size_t op)>& before) {
  const auto bound = bind_inputs(m(), options_.batch, inputs, caller);
  for (;;) {  // again after each layer newly kept as fp32 (at most one per float tensor)
    executor_->write_inputs(bound);
    try {
      if (substitutes_.empty() && stop == SIZE_MAX && !before) {
        executor_->forward(timings);
      } else {
        const ForwardHooks hooks{.substitutes = &substitutes_, .stop = stop, .before = before};
        executor_->forward(timings, &hooks);
      }
      return;
    } catch (const HalfOverflowError& e) {
      if (!keep_output_fp32(e)) throw;
    }
  }
}

std::vector<Tensor> SessionCore::outputs() const {
  const Model::Impl& model = m();
  std::vector<Tensor> outputs;
  for (size_t i = 0; i < model.outputs.size(); ++i) {
    const OutputInfo& info = model.outputs[i];
    Tensor t;
    t.name = info.name;
    t.dtype = DType::kFloat32;
    t.layout = info.layout;
    t.shape = info.dims;
    t.shape[0] = options_.batch;
    t.f32.resize(executor_->output_floats(i));
    executor_->read_output(i, t.f32.data());
    outputs.push_back(std::move(t));
  }
  return outputs;
}

void SessionCore::read_tensor(int t, Tensor& out) const {
  const TensorDesc& d = m().tensors.at(static_cast<size_t>(t));
  if (d.dtype != DType::kFloat32) throw Error("internal: tensor '" + d.name + "' is not a float tensor");
  out.name = d.name;
  out.dtype = DType::kFloat32;
  out.layout = d.layout;
  out.shape = d.dims;
  out.shape[0] = options_.batch;
  out.f32.resize(executor_->elements(t));
  executor_->read_tensor(t, out.f32.data());
}

void SessionCore::freeze_statistics(int op, const std::vector<float>& values) {
  const auto& ops = *m().root->ops();
  if (op < 0 || static_cast<uint32_t>(op) >= ops.size()) throw Error("internal: no op " + std::to_string(op) + " to freeze");
  const std::optional<StatisticLayer> layer = statistic_layer(m(), op);
  if (!layer) throw Error("internal: " + op_label(*ops.Get(static_cast<uint32_t>(op)), op) + " has no whole-map statistics to freeze");
  if (options_.backend != Backend::kCpu) throw Error("whole-picture statistics run on the cpu backend only, not " + std::string(backend_->name()));
  const size_t i = static_cast<size_t>(op), n = ops.size();
  frozen_values_.resize(n);
  frozen_kernels_.resize(n);
  substitutes_.resize(n, nullptr);
  if (values.empty()) {
    frozen_values_[i].clear();
    frozen_kernels_[i].reset();
    substitutes_[i] = nullptr;
    if (std::all_of(substitutes_.begin(), substitutes_.end(), [](const OpKernel* k) { return k == nullptr; })) substitutes_.clear();
    return;
  }
  const size_t expected = static_cast<size_t>(options_.batch * layer->floats_per_sample());
  if (values.size() != expected)
    throw Error("internal: " + std::to_string(values.size()) + " frozen values for " + op_label(*ops.Get(static_cast<uint32_t>(op)), op) + ", not " +
                std::to_string(expected));
  if (&frozen_values_[i] != &values) frozen_values_[i] = values;
  if (!frozen_kernels_[i]) {
    const KernelArgs args{.model = m(),
                          .op = *ops.Get(static_cast<uint32_t>(op)),
                          .weights = m(),
                          .batch = options_.batch,
                          .threads = threads_,
                          .conv_transpose2d_algo = options_.conv_transpose2d_algo,
                          .precision = options_.precision,
                          .tracker = nullptr,
                          .filter_copy_budget = nullptr,
                          .training = false,
                          .accumulate_input = {},
                          .zero_insert_backward = false,
                          .fp32_tensors = &executor_->plan().fp32_tensors};
    const SessionPlan& plan = executor_->plan();
    const int scratch = plan.workspace_buffer[i];
    frozen_kernels_[i] = frozen_statistics_kernel(*layer, args, scratch >= 0 ? plan.buffers[static_cast<size_t>(scratch)].size : 0);
  }
  frozen_kernels_[i]->set_values(frozen_values_[i].data());
  substitutes_[i] = frozen_kernels_[i].get();
}

}  // namespace edgegan
