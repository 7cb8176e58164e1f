// Small parts of the public API: tensors, names, deterministic noise, layout helpers.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "edgegan/edgegan.h"
#include "kernels_cpu/gemm/gemm_ukernel.h"
#include "kernels_cpu/channel_affine/channel_affine.h"
#include "kernels_cpu/concat/concat.h"
#include "kernels_cpu/elementwise/elementwise.h"
#include "kernels_cpu/embedding/embedding.h"
#include "kernels_cpu/reshape/reshape.h"

namespace edgegan {

int64_t Tensor::elements() const {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
}

const char* to_string(ConvTranspose2DAlgo algo) {
  switch (algo) {
    case ConvTranspose2DAlgo::kSplit: return "split";
    case ConvTranspose2DAlgo::kZeroInsert: return "zero-insert";
    case ConvTranspose2DAlgo::kCol2im: return "col2im";
  }
  return "unknown";
}

std::string cpu_kernel_family() {
  try {
    return cpu::isa_name(cpu::active_isa());
  } catch (const std::invalid_argument& e) {
    throw Error(e.what());
  }
}

std::string cpu_gemm_ukernel() {
  cpu_kernel_family();  // reports a bad EDGEGAN_ISA as an Error
  return cpu::gemm_ukernel().name;
}

ConvTranspose2DAlgo conv_transpose2d_algo_from_string(const std::string& name) {
  if (name == "split") return ConvTranspose2DAlgo::kSplit;
  if (name == "zero-insert") return ConvTranspose2DAlgo::kZeroInsert;
  if (name == "col2im") return ConvTranspose2DAlgo::kCol2im;
  throw Error("unknown transposed-convolution algorithm '" + name + "' (expected split, zero-insert or col2im)");
}

const char* to_string(Precision precision) {
  switch (precision) {
    case Precision::kFp32: return "fp32";
    case Precision::kTf32: return "tf32";
    case Precision::kFp16: return "fp16";
  }
  return "unknown";
}

Precision precision_from_string(const std::string& name) {
  if (name == "fp32") return Precision::kFp32;
  if (name == "tf32") return Precision::kTf32;
  if (name == "fp16") return Precision::kFp16;
  throw Error("unknown precision '" + name + "' (expected fp32, tf32 or fp16)");
}

std::vector<Tensor> batch_inputs(const Model& model, int batch, std::vector<float> values, std::vector<int64_t> labels) {
  std::vector<Tensor> inputs;
  bool float_bound = false, labels_bound = false;
  for (const InputInfo& info : model.inputs()) {
    Tensor t{info.name, info.dtype, info.layout, info.dims, {}, {}};
    t.shape[0] = batch;
    if (info.dtype == DType::kInt64 && !labels_bound) {
      if (static_cast<int64_t>(labels.size()) != batch)
        throw Error("the model is conditional; it needs " + std::to_string(batch) + " labels, got " + std::to_string(labels.size()));
      t.i64 = std::move(labels);
      labels_bound = true;
    } else if (info.dtype == DType::kFloat32 && !float_bound) {
      t.f32 = std::move(values);  // size checked by whoever runs the model, against the input's shape
      float_bound = true;
    } else {
      throw Error("the model's input '" + info.name + "' is a second " + (info.dtype == DType::kInt64 ? "label" : "float") +
                  " input; build the inputs by name for this model");
    }
    inputs.push_back(std::move(t));
  }
  if (!labels_bound && !labels.empty()) throw Error("labels were given, but the model takes none");
  return inputs;
}

std::vector<float> normal_noise(size_t count, uint64_t seed) {
  // std::normal_distribution differs between standard libraries; Box-Muller on the
  // standard-specified mt19937_64 stream gives the same numbers everywhere.
  std::mt19937_64 rng(seed);
  auto uniform = [&] { return (static_cast<double>(rng() >> 11) + 0.5) * (1.0 / 9007199254740992.0); };  // (0,1)
  std::vector<float> out(count);
  constexpr double kTwoPi = 6.283185307179586;
  for (size_t i = 0; i < count; i += 2) {
    const double r = std::sqrt(-2.0 * std::log(uniform()));
    const double theta = kTwoPi * uniform();
    out[i] = static_cast<float>(r * std::cos(theta));
    if (i + 1 < count) out[i + 1] = static_cast<float>(r * std::sin(theta));
  }
  return out;
}

Tensor to_nchw(const Tensor& t) {
  if (t.layout != Layout::kNHWC || t.shape.size() != 4) return t;
  Tensor r = t;
  r.layout = Layout::kRowMajor;
  r.shape = {t.shape[0], t.shape[3], t.shape[1], t.shape[2]};
  cpu::nhwc_to_nchw(t.shape[0], t.shape[3], t.shape[1], t.shape[2], t.f32.data(), r.f32.data());
  return r;
}

Tensor to_nhwc(const Tensor& t) {
  if (t.layout == Layout::kNHWC || t.shape.size() != 4 || t.dtype != DType::kFloat32) return t;
  Tensor r = t;
  r.layout = Layout::kNHWC;
  r.shape = {t.shape[0], t.shape[2], t.shape[3], t.shape[1]};
  cpu::nchw_to_nhwc(t.shape[0], t.shape[1], t.shape[2], t.shape[3], t.f32.data(), r.f32.data());
  return r;
}

}  // namespace edgegan
