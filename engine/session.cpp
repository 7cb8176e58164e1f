#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "engine/executor.h"
#include "engine/input_binding.h"
#include "engine/ops/half_route.h"
#include "engine/session_plan.h"
#include "engine/text_stream.h"

namespace edgegan {

constexpr int kMaxBatch = 1 << 16;

struct Session::Impl {
  std::shared_ptr<const Model> model;
  SessionOptions options;
  int threads = 1;
  const ComputeBackend* backend = nullptr;
  std::string weight_placement;  // as it was when the kernels were built
  PlanOptions plan_options;  // fp16 on the CPU: with the tensors kept as fp32 so far
  MemoryTracker tracker;  // declared before everything it accounts for
  std::unique_ptr<Executor> executor;

  const Model::Impl& m() const { return model->impl(); }
};

namespace {

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

// A function-try-block, so that even the Impl allocation's failure becomes an Error.
Session::Session(std::shared_ptr<const Model> model, const SessionOptions& options) try : impl_(std::make_unique<Impl>()) {
  if (!model) throw Error("session: no model");
  if (options.batch < 1 || options.batch > kMaxBatch)
    throw Error("session: batch " + std::to_string(options.batch) + " is outside 1.." + std::to_string(kMaxBatch));
  if (options.threads < 0 || options.threads > 1024)
    throw Error("session: threads " + std::to_string(options.threads) + " is outside 0..1024 (0 = all cores)");
  cpu_kernel_family();  // settles the kernel family: a bad EDGEGAN_ISA is an Error here, not inside a kernel
  Impl& s = *impl_;
  s.model = std::move(model);
  s.options = options;
  s.threads = session_threads(options.threads);

  s.backend = &compute_backend(options.backend, "session", options.device);
  check_precision(*s.backend, options.precision, /*planning=*/false, "session");
  PlanOptions& plan_options = s.plan_options;
  plan_options.batch = options.batch;
  plan_options.threads = s.threads;
  plan_options.conv_transpose2d_algo = options.conv_transpose2d_algo;
  plan_options.precision = options.precision;
  // Limits are checked on a dry plan (nothing allocated), then the real one is built.
  check_limits(s.m(), build_session_plan(s.m(), *s.backend, plan_options, s.m(), nullptr), options, s.model->weight_bytes());
  s.weight_placement = s.backend->weight_placement();
  s.executor = std::make_unique<Executor>(s.m(), *s.backend, build_session_plan(s.m(), *s.backend, plan_options, s.m(), &s.tracker), s.tracker,
                                          s.threads);
} catch (const std::bad_alloc&) {
  throw Error("session: out of memory while preparing the model");
}

Session::~Session() = default;

int Session::batch() const { return impl_->options.batch; }
int Session::threads() const { return impl_->threads; }
const SessionOptions& Session::options() const { return impl_->options; }
std::vector<std::string> Session::kernel_names() const {
  std::vector<std::string> names;
  for (const auto& k : impl_->executor->plan().kernels) names.push_back(k->kernel_name());
  return names;
}
const Model& Session::model() const { return *impl_->model; }
uint64_t Session::arena_bytes() const { return impl_->executor->plan().arena_bytes; }
uint64_t Session::session_weight_bytes() const { return impl_->executor->plan().session_weight_bytes; }
uint64_t Session::measured_allocation_bytes() const {
  return impl_->backend->device_memory() ? impl_->tracker.device_bytes() : impl_->tracker.current_bytes();
}
std::string Session::weight_placement() const { return impl_->weight_placement; }


std::vector<Tensor> Session::run(const std::vector<Tensor>& inputs) {
  try {
    return run_checked(inputs, nullptr);
  } catch (const std::bad_alloc&) {
    throw Error("run: out of memory");
  }
}

std::vector<Tensor> Session::run_profiled(const std::vector<Tensor>& inputs, std::vector<OpTiming>& timings) {
  try {
    return run_checked(inputs, &timings);
  } catch (const std::bad_alloc&) {
    throw Error("run: out of memory");
  }
}

std::vector<Tensor> Session::run_checked(const std::vector<Tensor>& inputs, std::vector<OpTiming>* timings) {
  Impl& s = *impl_;
  const Model::Impl& m = s.m();
  const auto bound = bind_inputs(m, s.options.batch, inputs, "run");
  // fp16 on the CPU: a layer whose output overflowed the half range has that tensor kept
  // as fp32 from now on. The plan is made again with it marked (over the memory limit:
  // the overflow stands, the session unchanged), and replaces the old one once it is
  // made (a failure leaves the session as it was); false where the error is not one to
  // recover from.
  auto keep_output_fp32 = [&](const HalfOverflowError& e) {
    const size_t t = static_cast<size_t>(e.tensor);
    std::vector<char>& fp32 = s.plan_options.fp32_tensors;
    if (e.tensor < 0 || s.options.backend != Backend::kCpu || (t < fp32.size() && fp32[t])) return false;
    fp32.resize(m.tensors.size(), 0);
    fp32[t] = 1;
    try {
      check_limits(m, build_session_plan(m, *s.backend, s.plan_options, m, nullptr), s.options, s.model->weight_bytes());
    } catch (const Error&) {
      fp32[t] = 0;
      return false;
    }
    try {
      s.executor = std::make_unique<Executor>(m, *s.backend, build_session_plan(m, *s.backend, s.plan_options, m, &s.tracker), s.tracker, s.threads);
    } catch (...) {
      fp32[t] = 0;
      throw;
    }
    const std::string notice = e.layer + ": its output is past the half range at fp16; kept as fp32 from now on";
    if (s.options.on_notice) {
      s.options.on_notice(notice);
    } else {
      std::fprintf(stderr, "edgegan: %s\n", notice.c_str());
    }
    return true;
  };
  for (;;) {  // again after each layer newly kept as fp32 (at most one per float tensor)
    s.executor->write_inputs(bound);
    try {
      s.executor->forward(timings);
      break;
    } catch (const HalfOverflowError& e) {
      if (!keep_output_fp32(e)) throw;
    }
  }
  std::vector<Tensor> outputs;
  for (size_t i = 0; i < m.outputs.size(); ++i) {
    const OutputInfo& info = m.outputs[i];
    Tensor t;
    t.name = info.name;
    t.dtype = DType::kFloat32;
    t.layout = info.layout;
    t.shape = info.dims;
    t.shape[0] = s.options.batch;
    t.f32.resize(s.executor->output_floats(i));
    s.executor->read_output(i, t.f32.data());
    outputs.push_back(std::move(t));
  }
  return outputs;
}

Tensor Session::generate(std::span<const float> noise, std::span<const int64_t> labels) {
  const Model::Impl& m = impl_->m();
  std::vector<Tensor> inputs;
  const int64_t batch = impl_->options.batch;
  const bool conditional = std::any_of(m.inputs.begin(), m.inputs.end(), [](const InputInfo& i) { return i.role == InputRole::kLabel; });
  if (!labels.empty() && !conditional) throw Error("generate: the model takes no labels");
  for (const InputInfo& info : m.inputs) {
    Tensor t;
    t.name = info.name;
    t.dtype = info.dtype;
    t.layout = info.layout;
    t.shape = info.dims;
    t.shape[0] = batch;
    if (info.role == InputRole::kNoise) {
      if (static_cast<int64_t>(noise.size()) != batch * info.noise_size)
        throw Error("generate: noise holds " + std::to_string(noise.size()) + " values, batch " + std::to_string(batch) +
                    " needs " + std::to_string(batch * info.noise_size));
      t.f32.assign(noise.begin(), noise.end());
    } else if (info.role == InputRole::kLabel) {
      if (static_cast<int64_t>(labels.size()) != batch)
        throw Error("generate: the model is conditional; give one label per image (" + std::to_string(batch) + "), got " +
                    std::to_string(labels.size()));
      t.i64.assign(labels.begin(), labels.end());
    } else {
      throw Error("generate: input '" + info.name + "' is neither noise nor a label; use run() for this model");
    }
    inputs.push_back(std::move(t));
  }
  return std::move(run(inputs).front());
}

}  // namespace edgegan
