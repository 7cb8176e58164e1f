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
  const std::string who(caller);
  for (const Tensor& t : inputs) {
    const bool known = std::any_of(m.inputs.begin(), m.inputs.end(), [&](const InputInfo& i) { return i.name == t.name; });
    if (!known) throw Error(who + ": the model has no input named '" + t.name + "'");
  }
  std::vector<const Tensor*> bound;
  for (const InputInfo& info : m.inputs) {
    const Tensor* given = nullptr;
    for (const Tensor& t : inputs)
      if (t.name == info.name) {
        if (given) throw Error(who + ": input '" + info.name + "' is given twice");
        given = &t;
      }
    if (!given) throw Error(who + ": input '" + info.name + "' is missing");
    std::vector<int64_t> want = info.dims;
    want[0] = batch;
    if (given->shape != want)
      throw Error(who + ": input '" + info.name + "' has shape " + shape_text(given->shape) + ", the session needs " + shape_text(want) +
                  (info.layout == Layout::kNHWC ? " (NHWC)" : ""));
    if (given->dtype != info.dtype)
      throw Error(who + ": input '" + info.name + "' must be " + (info.dtype == DType::kInt64 ? "int64" : "float32"));
    const size_t count = static_cast<size_t>(given->elements());
    const size_t have = info.dtype == DType::kInt64 ? given->i64.size() : given->f32.size();
    if (have != count) throw Error(who + ": input '" + info.name + "' holds " + std::to_string(have) + " values, its shape needs " + std::to_string(count));
    bound.push_back(given);
  }
  return bound;
}

}  // namespace edgegan
