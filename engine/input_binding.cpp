#include "engine/input_binding.h"

#include <algorithm>

#include "engine/text_stream.h"

namespace edgegan {

std::string shape_text(const std::vector<int64_t>& d) {
  auto os = text_stream();
  os << "[";
  for (size_t i = 0; i < d.size(); ++i) os << (i ? ", " : "") << d[i];
  os << "]";
  return os.str();
}

std::vector<const Tensor*> bind_inputs(const Model::Impl& m, int64_t batch, const std::vector<Tensor>& inputs, const char* caller) {
  std::vector<const Tensor*> bound;
  bind_inputs(m, batch, inputs, caller, bound);
  return bound;
}

void bind_inputs(const Model::Impl& m, int64_t batch, const std::vector<Tensor>& inputs, const char* caller, std::vector<const Tensor*>& bound) {
  const char* who = caller;
  for (const Tensor& t : inputs) {
    const bool known = std::any_of(m.inputs.begin(), m.inputs.end(), [&](const InputInfo& i) { return i.name == t.name; });
    if (!known) throw Error(std::string(who) + ": the model has no input named '" + t.name + "'");
  }
  bound.resize(m.inputs.size());
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const InputInfo& info = m.inputs[i];
    const Tensor* given = nullptr;
    for (const Tensor& t : inputs)
      if (t.name == info.name) {
        if (given) throw Error(std::string(who) + ": input '" + info.name + "' is given twice");
        given = &t;
      }
    if (!given) throw Error(std::string(who) + ": input '" + info.name + "' is missing");
    // Compared in place: binding allocates nothing unless it fails.
    bool shape_ok = given->shape.size() == info.dims.size() && !given->shape.empty() && given->shape[0] == batch;
    for (size_t k = 1; shape_ok && k < info.dims.size(); ++k) shape_ok = given->shape[k] == info.dims[k];
    if (!shape_ok) {
      std::vector<int64_t> want = info.dims;
      want[0] = batch;
      throw Error(std::string(who) + ": input '" + info.name + "' has shape " + shape_text(given->shape) + ", the session needs " + shape_text(want) +
                  (info.layout == Layout::kNHWC ? " (NHWC)" : ""));
    }
    if (given->dtype != info.dtype)
      throw Error(std::string(who) + ": input '" + info.name + "' must be " + (info.dtype == DType::kInt64 ? "int64" : "float32"));
    const size_t count = static_cast<size_t>(given->elements());
    const size_t have = info.dtype == DType::kInt64 ? given->i64.size() : given->f32.size();
    if (have != count) throw Error(std::string(who) + ": input '" + info.name + "' holds " + std::to_string(have) + " values, its shape needs " + std::to_string(count));
    bound[i] = given;
  }
}

}  // namespace edgegan
