#include "engine/ops/op_validator.h"

#include <cmath>

#include "engine/text_stream.h"
#include "engine/ops/activation_schema.h"
#include "kernels_cpu/activation/activation.h"

namespace edgegan {

void fail_validation(const std::string& where, const std::string& what) { throw Error("invalid model: " + where + ": " + what); }

std::string dims_text(const std::vector<int64_t>& d) {
  auto os = text_stream();
  for (size_t i = 0; i < d.size(); ++i) os << (i ? "x" : "") << d[i];
  return os.str();
}

OpValidator::OpValidator(Model::Impl& model, int op_index, std::string where) : m_(model), op_(op_index), where_(std::move(where)) {}

bool OpValidator::is_graph_input(int index) const {
  if (!m_.root->inputs()) return false;
  for (const auto* in : *m_.root->inputs())
    if (in && in->tensor() == index) return true;
  return false;
}

const TensorDesc& OpValidator::tensor(int index, const char* role) const {
  if (index < 0 || static_cast<size_t>(index) >= m_.tensors.size())
    fail(std::string(role) + " tensor index " + std::to_string(index) + " is out of range");
  return m_.tensors[static_cast<size_t>(index)];
}

const TensorDesc& OpValidator::use(int index, const char* role) {
  const TensorDesc& t = tensor(index, role);
  if (t.producer >= op_ || (t.producer < 0 && !is_graph_input(index)))
    fail(std::string(role) + " tensor '" + t.name + "' is used before it is produced");
  return t;
}

TensorDesc& OpValidator::define(int index) {
  tensor(index, "output");
  TensorDesc& t = m_.tensors[static_cast<size_t>(index)];
  if (t.producer >= 0 || is_graph_input(index)) fail("output tensor '" + t.name + "' is produced twice");
  t.producer = op_;
  return t;
}

TensorDesc& OpValidator::define_output(int index, const std::vector<int64_t>& dims) {
  TensorDesc& t = define(index);
  derive_dims(t, dims);
  return t;
}

void OpValidator::derive_dims(TensorDesc& t, const std::vector<int64_t>& dims) const {
  if (!resizing()) {
    expect_dims(t, dims, "output");
    return;
  }
  if (dims.size() != t.dims.size()) fail("output '" + t.name + "' would change rank");
  int64_t per_sample = 1;
  for (size_t k = 1; k < dims.size(); ++k) {
    if (dims[k] < 1 || dims[k] > kMaxDim) fail("output '" + t.name + "' would be " + dims_text(dims) + ", outside the engine's limits");
    per_sample = checked_mul(per_sample, dims[k]);
  }
  t.dims = dims;
  t.per_sample = per_sample;
}

const std::vector<int64_t>& OpValidator::file_dims(int index) const {
  const Model::Impl& file = resizing() ? m_.file_model->impl() : m_;
  return file.tensors[static_cast<size_t>(index)].dims;
}

void OpValidator::expect_float(const TensorDesc& t) const {
  if (t.dtype != DType::kFloat32) fail("tensor '" + t.name + "' must be float32");
}

void OpValidator::expect_dims(const TensorDesc& t, const std::vector<int64_t>& want, const char* role) const {
  if (t.dims != want) fail(std::string(role) + " '" + t.name + "' has shape " + dims_text(t.dims) + ", the op needs " + dims_text(want));
}

void OpValidator::check_range(int64_t v, int64_t lo, int64_t hi, const char* what) const {
  if (v < lo || v > hi) fail(std::string(what) + " = " + std::to_string(v) + " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
}

int64_t OpValidator::checked_mul(int64_t a, int64_t b) const {
  if (a < 0 || b < 0) fail("negative size");
  if (a != 0 && b > kMaxElements / a) fail("size overflows the engine's limits");
  return a * b;
}

void OpValidator::expect_buffer(uint32_t index, uint64_t elements, const char* role, bool optional, bool fp16_allowed) const {
  const auto* buffers = m_.root->buffers();
  if (index >= buffers->size()) fail(std::string(role) + " buffer index " + std::to_string(index) + " is out of range");
  if (index == 0) {
    if (optional || elements == 0) return;
    fail(std::string(role) + " is missing");
  }
  const bool fp16 = buffers->Get(index)->dtype() == schema::DType_Float16;
  if (fp16 && !fp16_allowed) fail(std::string(role) + " buffer is float16; only transposed-convolution weights may be");
  const uint64_t want = elements * (fp16 ? 2 : 4);
  if (buffers->Get(index)->size() != want)
    fail(std::string(role) + " buffer has " + std::to_string(buffers->Get(index)->size()) + " bytes, the op needs " + std::to_string(want));
}

void OpValidator::check_activation(schema::Activation a, float alpha, float beta) const {
  if (a < schema::Activation_MIN || a > schema::Activation_MAX) fail("unknown activation");
  // Its slopes live in an epilogue (check_epilogue), so nowhere else may name it.
  if (a == schema::Activation_PRelu) fail("activation PRelu outside a convolution's epilogue");
  if (!std::isfinite(alpha)) fail("activation slope is not finite");
  if (!std::isfinite(beta)) fail("activation parameter beta is not finite");
  // The gradients from the output need these (docs/ops.md).
  if ((a == schema::Activation_Elu || a == schema::Activation_Selu) && !(alpha > 0.f)) fail("Elu/Selu alpha must be positive");
  if (a == schema::Activation_Selu && !(beta > 0.f)) fail("Selu gamma must be positive");
}

const TensorDesc* OpValidator::use_residual(int index) {
  if (index == -1) return nullptr;
  return &use(index, "residual");
}

void OpValidator::check_residual(const TensorDesc* r, const TensorDesc& y, schema::Activation activation) const {
  if (!r) return;
  expect_float(*r);
  if (r->layout != y.layout || r->dims != y.dims)
    fail("residual '" + r->name + "' " + dims_text(r->dims) + " does not have the output's shape " + dims_text(y.dims) + " and layout");
  if (activation != schema::Activation_None) fail("a residual needs activation None (it is added after the epilogue)");
}

void OpValidator::check_epilogue(const schema::Epilogue* ep, int64_t channels, bool prelu) const {
  if (!ep) return;
  expect_buffer(ep->bias(), static_cast<uint64_t>(channels), "bias", true);
  if (ep->activation() == schema::Activation_PRelu) {
    if (!prelu) fail("activation PRelu cannot be fused into this op");
    expect_buffer(ep->slope(), static_cast<uint64_t>(channels), "slope", false);
    return;
  }
  if (ep->slope()) fail("slope set without activation PRelu");
  check_activation(ep->activation(), ep->alpha(), ep->beta());
  if (!cpu::activation_invertible(to_activation(ep->activation())))
    fail("a fused activation whose gradient needs its input (HardSwish, Mish, Gelu, GeluTanh, Silu)");
}

}  // namespace edgegan
