#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "engine/memory_planner.h"
#include "engine/model_impl.h"
#include "engine/ops/op_kernel.h"

namespace edgegan {

constexpr int kMaxBatch = 1 << 16;

struct Session::Impl {
  std::shared_ptr<const Model> model;
  SessionOptions options;
  int threads = 1;
  std::vector<std::unique_ptr<OpKernel>> kernels;
  std::vector<PlannedBuffer> buffers;
  std::vector<int> tensor_buffer;     // buffer of every tensor
  std::vector<int> workspace_buffer;  // buffer of every op's scratch, -1 for none
  uint64_t arena_size = 0;
  std::unique_ptr<uint8_t, void (*)(void*)> arena{nullptr, &std::free};
  std::vector<uint8_t*> tensor_ptr;

  const Model::Impl& m() const { return model->impl(); }
  uint64_t tensor_bytes(int t) const {
    const TensorDesc& d = m().tensors[static_cast<size_t>(t)];
    return static_cast<uint64_t>(options.batch) * static_cast<uint64_t>(d.per_sample) * d.element_size();
  }
  void plan();
};

void Session::Impl::plan() {
  const Model::Impl& mi = m();
  const auto& ops = *mi.root->ops();
  const int n_ops = static_cast<int>(ops.size());
  const size_t n_tensors = mi.tensors.size();

  // Last step at which each tensor is read; graph outputs live to the end.
  std::vector<int> last_use(n_tensors, -1);
  for (int i = 0; i < n_ops; ++i)
    for (int t : op_inputs(*ops.Get(static_cast<uint32_t>(i)))) last_use[static_cast<size_t>(t)] = i;
  for (int t : mi.output_tensors) last_use[static_cast<size_t>(t)] = n_ops - 1;

  tensor_buffer.assign(n_tensors, -1);
  auto new_buffer = [&](uint64_t size, int first, int last) {
    buffers.push_back({size, first, std::max(first, last), 0});
    return static_cast<int>(buffers.size()) - 1;
  };
  for (int t : mi.input_tensors) tensor_buffer[static_cast<size_t>(t)] = new_buffer(tensor_bytes(t), 0, last_use[static_cast<size_t>(t)]);

  workspace_buffer.assign(static_cast<size_t>(n_ops), -1);
  for (int i = 0; i < n_ops; ++i) {
    const OpKernel& k = *kernels[static_cast<size_t>(i)];
    const int out = op_output(*ops.Get(static_cast<uint32_t>(i)));
    const int out_last = last_use[static_cast<size_t>(out)];
    int shared = -1;
    if (k.output_aliases_input()) {
      shared = tensor_buffer[static_cast<size_t>(op_inputs(*ops.Get(static_cast<uint32_t>(i)))[0])];
    } else if (k.works_in_place()) {
      // Overwrite the input only if nothing reads it after this op.
      const int b = tensor_buffer[static_cast<size_t>(k.in_place_input())];
      if (buffers[static_cast<size_t>(b)].last_step <= i) shared = b;
    }
    if (shared >= 0) {
      buffers[static_cast<size_t>(shared)].last_step = std::max(buffers[static_cast<size_t>(shared)].last_step, out_last);
      tensor_buffer[static_cast<size_t>(out)] = shared;
    } else {
      tensor_buffer[static_cast<size_t>(out)] = new_buffer(tensor_bytes(out), i, out_last);
    }
    if (k.workspace_bytes() > 0) workspace_buffer[static_cast<size_t>(i)] = new_buffer(k.workspace_bytes(), i, i);
  }
  arena_size = plan_arena(buffers, kWeightAlignment);
}

Session::Session(std::shared_ptr<const Model> model, const SessionOptions& options) : impl_(std::make_unique<Impl>()) {
  if (!model) throw Error("session: no model");
  if (options.backend == Backend::kCuda)
    throw Error("session: the CUDA backend is not available in this build yet; use the CPU backend");
  if (options.batch < 1 || options.batch > kMaxBatch)
    throw Error("session: batch " + std::to_string(options.batch) + " is outside 1.." + std::to_string(kMaxBatch));
  if (options.threads < 0 || options.threads > 1024)
    throw Error("session: threads " + std::to_string(options.threads) + " is outside 0..1024 (0 = all cores)");
  Impl& s = *impl_;
  s.model = std::move(model);
  s.options = options;
  s.threads = options.threads > 0 ? options.threads : std::max(1, omp_get_max_threads());

  for (const auto* op : *s.m().root->ops()) s.kernels.push_back(create_cpu_op(s.m(), *op, options.deconv_algo, options.batch));
  s.plan();
  if (s.arena_size > options.memory_limit_bytes)
    throw Error("session: the model needs a " + std::to_string(s.arena_size) + "-byte arena at batch " + std::to_string(options.batch) +
                ", over the memory limit of " + std::to_string(options.memory_limit_bytes) + " bytes");

  s.arena.reset(static_cast<uint8_t*>(std::aligned_alloc(kWeightAlignment, std::max<uint64_t>(s.arena_size, kWeightAlignment))));
  if (!s.arena) throw Error("session: cannot allocate the " + std::to_string(s.arena_size) + "-byte activation arena");
  s.tensor_ptr.resize(s.tensor_buffer.size());
  for (size_t t = 0; t < s.tensor_buffer.size(); ++t)
    s.tensor_ptr[t] = s.arena.get() + s.buffers[static_cast<size_t>(s.tensor_buffer[t])].offset;
}

Session::~Session() = default;

int Session::batch() const { return impl_->options.batch; }
int Session::threads() const { return impl_->threads; }
const SessionOptions& Session::options() const { return impl_->options; }
const Model& Session::model() const { return *impl_->model; }
uint64_t Session::arena_bytes() const { return impl_->arena_size; }

uint64_t Session::session_weight_bytes() const {
  uint64_t total = 0;
  for (const auto& k : impl_->kernels) total += k->repacked_weight_bytes();
  return total;
}

namespace {

std::string shape_str(const std::vector<int64_t>& d) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < d.size(); ++i) os << (i ? ", " : "") << d[i];
  os << "]";
  return os.str();
}

}  // namespace

std::vector<Tensor> Session::run(const std::vector<Tensor>& inputs) {
  Impl& s = *impl_;
  const Model::Impl& m = s.m();
  for (const Tensor& t : inputs) {
    const bool known = std::any_of(m.inputs.begin(), m.inputs.end(), [&](const InputInfo& i) { return i.name == t.name; });
    if (!known) throw Error("run: the model has no input named '" + t.name + "'");
  }
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const InputInfo& info = m.inputs[i];
    const Tensor* given = nullptr;
    for (const Tensor& t : inputs)
      if (t.name == info.name) {
        if (given) throw Error("run: input '" + info.name + "' is given twice");
        given = &t;
      }
    if (!given) throw Error("run: input '" + info.name + "' is missing");
    std::vector<int64_t> want = info.dims;
    want[0] = s.options.batch;
    if (given->shape != want)
      throw Error("run: input '" + info.name + "' has shape " + shape_str(given->shape) + ", the session needs " + shape_str(want) +
                  (info.layout == Layout::kNHWC ? " (NHWC)" : ""));
    if (given->dtype != info.dtype)
      throw Error("run: input '" + info.name + "' must be " + (info.dtype == DType::kInt64 ? "int64" : "float32"));
    const size_t count = static_cast<size_t>(given->elements());
    const size_t have = info.dtype == DType::kInt64 ? given->i64.size() : given->f32.size();
    if (have != count) throw Error("run: input '" + info.name + "' holds " + std::to_string(have) + " values, its shape needs " + std::to_string(count));
    uint8_t* dst = s.tensor_ptr[static_cast<size_t>(m.input_tensors[i])];
    if (info.dtype == DType::kInt64) std::memcpy(dst, given->i64.data(), count * 8);
    else std::memcpy(dst, given->f32.data(), count * 4);
  }

  RunContext ctx;
  ctx.tensors = &s.tensor_ptr;
  ctx.batch = s.options.batch;
  ctx.threads = s.threads;
  for (size_t i = 0; i < s.kernels.size(); ++i) {
    const int ws = s.workspace_buffer[i];
    ctx.workspace = ws >= 0 ? s.arena.get() + s.buffers[static_cast<size_t>(ws)].offset : nullptr;
    s.kernels[i]->run(ctx);
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
    const float* src = reinterpret_cast<const float*>(s.tensor_ptr[static_cast<size_t>(m.output_tensors[i])]);
    t.f32.assign(src, src + t.elements());
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
