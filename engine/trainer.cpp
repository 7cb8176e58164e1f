// Trainer: the Session's kernels on a training plan (engine/session_plan.h), reading
// the trainer's own float copies of the weights. Forward keeps every value its
// backward reads; backward runs each op's backward (OpKernel::backward) in reverse,
// into gradients planned in the same arena. Everything is allocated at construction.
#include "edgegan/trainer.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "edgegan/io.h"
#include "engine/executor.h"
#include "engine/input_binding.h"
#include "engine/model_impl.h"
#include "engine/model_integrity.h"
#include "kernels_cpu/common/half.h"
#include "kernels_cpu/optimizer/optimizer.h"

namespace edgegan {
namespace {

constexpr int kMaxBatch = 1 << 16;

// A trainable weight buffer of the model file.
struct Param {
  std::string name;
  uint32_t buffer = 0;  // where save() writes it back
  int op = -1;          // the first op that reads it
  bool frozen = false;
  size_t count = 0;  // elements
  int states = 0;    // optimizer state arrays: Adam 2, SGD with momentum 1, frozen 0
  std::vector<float> value, grad, state1, state2;  // optimizer state only as the optimizer needs it
};

// The kernels read the trainer's copies (fp16 weights train in float).
class TrainerWeights final : public WeightSource {
 public:
  explicit TrainerWeights(const std::map<uint32_t, const float*>& values) : values_(values) {}
  const float* f32(uint32_t buffer) const override {
    if (buffer == 0) return nullptr;
    const auto it = values_.find(buffer);
    if (it == values_.end()) throw Error("internal: weight buffer " + std::to_string(buffer) + " is not a parameter");
    return it->second;
  }
  const uint16_t* f16(uint32_t) const override { return nullptr; }
  bool is_f16(uint32_t) const override { return false; }

 private:
  const std::map<uint32_t, const float*>& values_;
};

// Kernels built for planning only read no weight; a trainer's are float.
class PlanningWeights final : public WeightSource {
 public:
  const float* f32(uint32_t) const override { return nullptr; }
  const uint16_t* f16(uint32_t) const override { return nullptr; }
  bool is_f16(uint32_t) const override { return false; }
};

}  // namespace

struct Trainer::Impl {
  std::shared_ptr<const Model> model;
  TrainerOptions options;
  int threads = 1;
  int64_t batch = 1;
  std::vector<Param> params;
  std::map<uint32_t, const float*> param_values;  // buffer -> the trainer's copy
  std::vector<std::vector<int>> op_params;         // per op and slot: param index, -1 for an absent weight
  std::vector<std::vector<float*>> param_gradients;  // per op and slot: where backward adds
  MemoryTracker tracker;
  std::unique_ptr<Executor> executor;
  std::vector<const Tensor*> bound;  // kept so that passes allocate nothing
  std::vector<char> want_gradient;   // per tensor
  std::vector<std::vector<float*>> no_parameter_gradients;
  bool have_forward = false;
  int64_t steps = 0;

  const Model::Impl& m() const { return model->impl(); }
  // Makes the parameters (planning_only: their sizes only) and, unless planning, the executor.
  void build(bool planning_only);
  PlanOptions plan_options() const;
  void backward_pass(const std::vector<Tensor>& output_gradients, bool with_parameters, bool with_input_gradients, const char* what,
                     std::vector<Tensor>* input_gradients);
};

PlanOptions Trainer::Impl::plan_options() const {
  PlanOptions p;
  p.batch = batch;
  p.threads = threads;
  p.training = true;
  p.zero_insert_backward = options.conv_transpose_backward == ConvTransposeBackward::kZeroInsert;
  return p;
}

void Trainer::Impl::build(bool planning_only) {
  const auto& ops = *m().root->ops();
  for (int frozen : options.frozen_ops)
    if (frozen < 0 || frozen >= static_cast<int>(ops.size()))
      throw Error("trainer: frozen op " + std::to_string(frozen) + " is outside 0.." + std::to_string(ops.size() - 1));
  std::map<uint32_t, int> param_of_buffer;  // a buffer two ops read is one (tied) parameter
  for (uint32_t i = 0; i < ops.size(); ++i) {
    const schema::Op& op = *ops.Get(i);
    std::vector<int>& slots = op_params.emplace_back();
    for (const ParameterSlot& slot : op_def(op).parameters(op)) {
      if (slot.buffer == 0) {
        slots.push_back(-1);
        continue;
      }
      const auto known = param_of_buffer.find(slot.buffer);
      if (known != param_of_buffer.end()) {
        slots.push_back(known->second);
        continue;
      }
      Param p;
      p.name = op_label(op, static_cast<int>(i)) + " " + slot.name;
      p.buffer = slot.buffer;
      p.count = m().buffer_elements(slot.buffer);
      p.op = static_cast<int>(i);
      p.frozen = std::find(options.frozen_ops.begin(), options.frozen_ops.end(), p.op) != options.frozen_ops.end();
      p.states = p.frozen ? 0 : options.optimizer == Optimizer::kAdam ? 2 : options.momentum != 0.f ? 1 : 0;
      if (!planning_only) {
        p.value = m().widened(slot.buffer);
        p.grad.assign(p.count, 0.f);
        if (p.states >= 1) p.state1.assign(p.count, 0.f);
        if (p.states >= 2) p.state2.assign(p.count, 0.f);
      }
      param_of_buffer[slot.buffer] = static_cast<int>(params.size());
      slots.push_back(static_cast<int>(params.size()));
      params.push_back(std::move(p));
    }
  }
  if (planning_only) return;
  for (const Param& p : params) param_values[p.buffer] = p.value.data();
  for (const std::vector<int>& slots : op_params) {
    std::vector<float*>& grads = param_gradients.emplace_back();
    for (int p : slots) grads.push_back(p >= 0 ? params[static_cast<size_t>(p)].grad.data() : nullptr);
  }
  no_parameter_gradients.assign(ops.size(), {});
  const TrainerWeights weights(param_values);
  const ComputeBackend& backend = compute_backend(Backend::kCpu, "trainer");
  executor = std::make_unique<Executor>(m(), backend, build_session_plan(m(), backend, plan_options(), weights, &tracker), tracker, threads);
  want_gradient.assign(m().tensors.size(), 1);
}

Trainer::Trainer(std::shared_ptr<const Model> model, const TrainerOptions& options) try : impl_(std::make_unique<Impl>()) {
  if (!model) throw Error("trainer: no model");
  if (options.batch < 1 || options.batch > kMaxBatch) throw Error("trainer: batch " + std::to_string(options.batch) + " is outside 1..65536");
  if (!(options.learning_rate > 0.f)) throw Error("trainer: the learning rate must be positive");
  if (options.threads < 0 || options.threads > 1024)
    throw Error("trainer: threads " + std::to_string(options.threads) + " is outside 0..1024 (0 = all cores)");
  cpu_kernel_family();  // settles the kernel family: a bad EDGEGAN_ISA is an Error here, not inside a kernel
  Impl& s = *impl_;
  s.model = std::move(model);
  s.options = options;
  s.batch = options.batch;
  s.threads = session_threads(options.threads);
  s.build(/*planning_only=*/false);
} catch (const std::bad_alloc&) {
  throw Error("trainer: out of memory while preparing the model");
}

Trainer::~Trainer() = default;

namespace {

// Gives `t` the name, dtype, layout and shape of a graph tensor at `batch`, reusing its storage.
void shape_like(Tensor& t, const std::string& name, DType dtype, Layout layout, const std::vector<int64_t>& dims, int64_t batch) {
  if (t.name != name) t.name = name;
  t.dtype = dtype;
  t.layout = layout;
  t.shape.resize(dims.size());
  std::copy(dims.begin(), dims.end(), t.shape.begin());
  t.shape[0] = batch;
}

}  // namespace

void Trainer::forward_into(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) try {
  Impl& s = *impl_;
  const Model::Impl& m = s.m();
  bind_inputs(m, s.batch, inputs, "forward", s.bound);
  s.executor->write_inputs(s.bound);
  s.executor->forward();
  s.have_forward = true;
  outputs.resize(m.outputs.size());
  for (size_t i = 0; i < m.outputs.size(); ++i) {
    Tensor& t = outputs[i];
    shape_like(t, m.outputs[i].name, DType::kFloat32, m.outputs[i].layout, m.outputs[i].dims, s.batch);
    t.i64.clear();
    t.f32.resize(s.executor->output_floats(i));
    s.executor->read_output(i, t.f32.data());
  }
} catch (const std::bad_alloc&) {
  throw Error("forward: out of memory");
}

std::vector<Tensor> Trainer::forward(const std::vector<Tensor>& inputs) {
  std::vector<Tensor> outputs;
  forward_into(inputs, outputs);
  return outputs;
}

void Trainer::Impl::backward_pass(const std::vector<Tensor>& output_gradients, bool with_parameters, bool with_input_gradients,
                                  const char* what, std::vector<Tensor>* input_gradients) try {
  const Model::Impl& mi = m();
  if (!have_forward) throw Error(std::string(what) + ": call forward() first");
  if (output_gradients.size() != mi.outputs.size())
    throw Error(std::string(what) + ": the model has " + std::to_string(mi.outputs.size()) + " outputs, got " +
                std::to_string(output_gradients.size()) + " gradients");
  for (size_t i = 0; i < mi.outputs.size(); ++i) {
    const Tensor& g = output_gradients[i];
    const uint64_t want = executor->output_floats(i);
    if (g.dtype != DType::kFloat32 || g.f32.size() != want)
      throw Error(std::string(what) + ": the gradient of output '" + mi.outputs[i].name + "' must hold " + std::to_string(want) + " floats");
  }
  for (size_t i = 0; i < mi.outputs.size(); ++i) {
    // A tensor listed as two outputs gets both gradients.
    bool repeated = false;
    for (size_t j = 0; j < i; ++j) repeated |= mi.output_tensors[j] == mi.output_tensors[i];
    executor->write_output_gradient(i, output_gradients[i].f32.data(), repeated);
  }
  for (int t : mi.input_tensors) want_gradient[static_cast<size_t>(t)] = with_input_gradients;
  executor->backward(want_gradient, with_parameters ? param_gradients : no_parameter_gradients);
  if (!input_gradients) return;
  input_gradients->resize(mi.inputs.size());
  for (size_t i = 0; i < mi.inputs.size(); ++i) {
    const InputInfo& info = mi.inputs[i];
    Tensor& t = (*input_gradients)[i];
    shape_like(t, info.name, info.dtype, info.layout, info.dims, batch);
    t.i64.clear();
    if (info.dtype != DType::kFloat32) {  // labels have no gradient
      t.shape.clear();
      t.f32.clear();
      continue;
    }
    t.f32.resize(static_cast<size_t>(batch * mi.tensors[static_cast<size_t>(mi.input_tensors[i])].per_sample));
    executor->read_gradient(mi.input_tensors[i], t.f32.data());
  }
} catch (const std::bad_alloc&) {
  throw Error(std::string(what) + ": out of memory");
}

std::vector<Tensor> Trainer::backward(const std::vector<Tensor>& output_gradients) {
  std::vector<Tensor> grads;
  backward_into(output_gradients, grads);
  return grads;
}

void Trainer::backward_into(const std::vector<Tensor>& output_gradients, std::vector<Tensor>& input_gradients) {
  impl_->backward_pass(output_gradients, true, true, "backward", &input_gradients);
}

void Trainer::backward_parameters(const std::vector<Tensor>& output_gradients) {
  impl_->backward_pass(output_gradients, true, false, "backward_parameters", nullptr);
}

std::vector<Tensor> Trainer::input_gradients(const std::vector<Tensor>& output_gradients) {
  std::vector<Tensor> grads;
  input_gradients_into(output_gradients, grads);
  return grads;
}

void Trainer::input_gradients_into(const std::vector<Tensor>& output_gradients, std::vector<Tensor>& input_gradients) {
  impl_->backward_pass(output_gradients, false, true, "input_gradients", &input_gradients);
}

void Trainer::step() {
  Impl& s = *impl_;
  ++s.steps;
  for (Param& p : s.params) {
    if (p.frozen) continue;
    const int64_t n = static_cast<int64_t>(p.value.size());
    if (s.options.optimizer == Optimizer::kSgd) {
      cpu::sgd_step(n, p.value.data(), p.grad.data(), p.state1.data(), s.steps == 1,
                    {s.options.learning_rate, s.options.momentum, 0.f, s.options.weight_decay, false});
    } else {
      cpu::adam_step(n, p.value.data(), p.grad.data(), p.state1.data(), p.state2.data(), s.steps,
                     {s.options.learning_rate, s.options.beta1, s.options.beta2, s.options.eps, s.options.weight_decay});
    }
  }
  // Kernels that keep transformed copies of their weights re-derive them.
  for (size_t op = 0; op < s.op_params.size(); ++op)
    for (int p : s.op_params[op])
      if (p >= 0 && !s.params[static_cast<size_t>(p)].frozen) {
        s.executor->weights_changed(static_cast<int>(op));
        break;
      }
  zero_grad();
}

void Trainer::zero_grad() {
  for (Param& p : impl_->params) std::fill(p.grad.begin(), p.grad.end(), 0.f);
}

std::vector<Parameter> Trainer::parameters() {
  std::vector<Parameter> out;
  for (Param& p : impl_->params) out.push_back({p.name, &p.value, &p.grad, p.op, !p.frozen});
  return out;
}

void Trainer::parameters_edited() {
  Impl& s = *impl_;
  for (size_t op = 0; op < s.op_params.size(); ++op)
    for (int p : s.op_params[op])
      if (p >= 0) {
        s.executor->weights_changed(static_cast<int>(op));
        break;
      }
}

int64_t Trainer::parameter_count() const {
  int64_t n = 0;
  for (const Param& p : impl_->params) n += static_cast<int64_t>(p.value.size());
  return n;
}

int64_t Trainer::steps_taken() const { return impl_->steps; }
const Model& Trainer::model() const { return *impl_->model; }
int Trainer::batch() const { return static_cast<int>(impl_->batch); }
std::vector<std::string> Trainer::kernel_names() const {
  std::vector<std::string> names;
  for (const auto& k : impl_->executor->plan().kernels) names.push_back(k->kernel_name());
  return names;
}
uint64_t Trainer::measured_allocation_bytes() const { return impl_->tracker.current_bytes(); }

void Trainer::save(const std::string& path, const std::string& source_path) const {
  const Impl& s = *impl_;
  const Model::Impl& m = s.m();
  if (!source_path.empty()) ensure_not_an_input(path, {source_path});
  // Same file, same layout: only the weight bytes change, so the phases stay split
  // and every offset stays valid. The old checksum trailer is left behind and a
  // new one sealed over the new weights; a file from before checksums gains them.
  const size_t data_begin = static_cast<size_t>(m.data - m.file);
  std::vector<uint8_t> bytes(m.file, m.file + data_begin + m.data_size);
  if (!schema::GetMutableSizePrefixedModel(bytes.data())->mutate_schema_version(kSchemaVersion))
    throw Error("internal: the model's schema version is not stored in place");
  for (const Param& p : s.params) {
    uint8_t* dst = bytes.data() + data_begin + m.root->buffers()->Get(p.buffer)->offset();
    if (m.is_f16(p.buffer)) {  // an fp16 model stays fp16: the tuned weights are rounded to half
      for (size_t i = 0; i < p.value.size(); ++i) {
        const uint16_t h = cpu::float_to_half(p.value[i]);
        std::memcpy(dst + i * sizeof h, &h, sizeof h);
      }
    } else {
      std::memcpy(dst, p.value.data(), p.value.size() * sizeof(float));
    }
  }
  seal_model_file(bytes);
  // What we write must load. Its checksums were computed just above; hashing the
  // whole file again would only check seal_model_file against itself.
  Model::from_bytes(bytes, {.verify_checksums = false});
  write_file_atomically(path, bytes.data(), bytes.size());
}

// ---- memory: planned from the model alone, or measured from what a Trainer holds.

int64_t TrainingMemory::total() const {
  return arena + parameters + parameter_gradients + optimizer_state + weight_copies + mapped_weights;
}

namespace {

// The arena's parts, from a training plan.
void arena_parts(const Model::Impl& m, const SessionPlan& plan, TrainingMemory& r) {
  auto size = [&](int buffer) { return buffer < 0 ? int64_t{0} : static_cast<int64_t>(plan.buffers[static_cast<size_t>(buffer)].size); };
  // Values that share a buffer (a Reshape that moves nothing aliases its input) count once.
  std::vector<char> counted(plan.buffers.size(), 0);
  for (size_t t = 0; t < m.tensors.size(); ++t) {
    const int b = plan.tensor_buffer[t];
    if (!counted[static_cast<size_t>(b)]) (m.tensors[t].dtype == DType::kFloat32 ? r.activations : r.labels) += size(b);
    counted[static_cast<size_t>(b)] = 1;
    r.activation_gradients += size(plan.gradient_buffer[t]);
  }
  for (size_t i = 0; i < plan.kernels.size(); ++i) r.scratch += size(plan.workspace_buffer[i]) + size(plan.backward_workspace_buffer[i]);
  r.arena = static_cast<int64_t>(plan.arena_bytes);
  r.weight_copies = static_cast<int64_t>(plan.session_weight_bytes);
}

}  // namespace

TrainingMemory training_memory(const std::shared_ptr<const Model>& model, const TrainerOptions& options) {
  if (!model) throw Error("training_memory: no model");
  if (options.batch < 1 || options.batch > kMaxBatch) throw Error("training_memory: batch " + std::to_string(options.batch) + " is outside 1..65536");
  Trainer::Impl s;
  s.model = model;
  s.options = options;
  s.batch = options.batch;
  s.threads = session_threads(options.threads);
  s.build(/*planning_only=*/true);
  TrainingMemory r;
  const PlanningWeights planning;
  const SessionPlan plan = build_session_plan(s.m(), compute_backend(Backend::kCpu, "training_memory"), s.plan_options(), planning, nullptr);
  arena_parts(s.m(), plan, r);
  for (const Param& p : s.params) {
    const auto bytes = static_cast<int64_t>(p.count * sizeof(float));
    r.parameters += bytes;
    r.parameter_gradients += bytes;
    r.optimizer_state += p.states * bytes;
  }
  r.mapped_weights = static_cast<int64_t>(model->weight_bytes());
  return r;
}

TrainingMemory Trainer::memory() const {
  const Impl& s = *impl_;
  auto bytes = [](const auto& v) { return static_cast<int64_t>(v.capacity() * sizeof(v[0])); };
  TrainingMemory r;
  arena_parts(s.m(), s.executor->plan(), r);
  r.arena = static_cast<int64_t>(s.tracker.current_bytes()) - static_cast<int64_t>(s.executor->plan().session_weight_bytes);
  for (const Param& p : s.params) {
    r.parameters += bytes(p.value);
    r.parameter_gradients += bytes(p.grad);
    r.optimizer_state += bytes(p.state1) + bytes(p.state2);
  }
  r.mapped_weights = static_cast<int64_t>(s.model->weight_bytes());
  return r;
}

}  // namespace edgegan
