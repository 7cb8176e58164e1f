#include <algorithm>

#include "engine/session_core.h"

namespace edgegan {

struct Session::Impl : SessionCore {
  using SessionCore::SessionCore;
};

// A function-try-block, so that even the Impl allocation's failure becomes an Error.
Session::Session(std::shared_ptr<const Model> model, const SessionOptions& options) try
    : impl_(std::make_unique<Impl>(std::move(model), options)) {
} catch (const std::bad_alloc&) {
  throw Error("session: out of memory while preparing the model");
}

Session::~Session() = default;

int Session::batch() const { return impl_->options().batch; }
int Session::threads() const { return impl_->threads(); }
const SessionOptions& Session::options() const { return impl_->options(); }
std::vector<std::string> Session::kernel_names() const {
  std::vector<std::string> names;
  for (const auto& k : impl_->executor().plan().kernels) names.push_back(k->kernel_name());
  return names;
}
const Model& Session::model() const { return impl_->model(); }
uint64_t Session::arena_bytes() const { return impl_->executor().plan().arena_bytes; }
uint64_t Session::session_weight_bytes() const { return impl_->executor().plan().session_weight_bytes; }
uint64_t Session::measured_allocation_bytes() const {
  return impl_->backend().device_memory() ? impl_->tracker().device_bytes() : impl_->tracker().current_bytes();
}
std::string Session::weight_placement() const { return impl_->weight_placement(); }


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
  impl_->forward(inputs, timings, "run");
  return impl_->outputs();
}

Tensor Session::generate(std::span<const float> noise, std::span<const int64_t> labels) {
  const Model::Impl& m = impl_->m();
  std::vector<Tensor> inputs;
  const int64_t batch = impl_->options().batch;
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
