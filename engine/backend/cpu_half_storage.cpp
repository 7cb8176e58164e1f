#include "engine/backend/cpu_half_storage.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "engine/ops/half_route.h"
#include "kernels_cpu/common/half_convert.h"

namespace edgegan {
namespace {

constexpr uint64_t kAlign = 64;
uint64_t aligned(uint64_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// Converts n values in chunks over `threads` (memory-bound: a chunk is a few pages).
void widen(const uint16_t* x, float* y, int64_t n, int threads) {
  constexpr int64_t kChunk = int64_t{1} << 15;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for num_threads(threads) schedule(static) if (chunks > 1 && threads > 1)
  for (int64_t c = 0; c < chunks; ++c) cpu::widen_halves(x + c * kChunk, y + c * kChunk, std::min(kChunk, n - c * kChunk));
}

bool narrow(const float* x, uint16_t* y, int64_t n, int threads) {
  constexpr int64_t kChunk = int64_t{1} << 15;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  bool overflow = false;
#pragma omp parallel for num_threads(threads) schedule(static) if (chunks > 1 && threads > 1) reduction(|| : overflow)
  for (int64_t c = 0; c < chunks; ++c) overflow = cpu::narrow_to_halves(x + c * kChunk, y + c * kChunk, std::min(kChunk, n - c * kChunk)) || overflow;
  return overflow;
}

class HalfStorageKernel final : public OpKernel {
 public:
  HalfStorageKernel(std::unique_ptr<OpKernel> fp32, const OpDef& def, const KernelArgs& args)
      : fp32_(std::move(fp32)), name_(std::string(fp32_->kernel_name()) + "+f16"), overflow_(def, args.op), output_(def.output(args.op)), table_(args.model.tensors.size(), nullptr) {
    uint64_t offset = aligned(fp32_->workspace_bytes());
    auto elements = [&](int t) { return args.batch * args.tensor(t).per_sample; };
    for (int t : def.inputs(args.op)) {
      if (args.tensor(t).dtype != DType::kFloat32 || args.kept_fp32(t)) continue;  // an fp32 tensor is read where it is
      if (std::any_of(widened_.begin(), widened_.end(), [&](const Copy& c) { return c.tensor == t; })) continue;  // read twice, widened once
      widened_.push_back({t, elements(t), offset});
      offset += aligned(static_cast<uint64_t>(elements(t)) * sizeof(float));
    }
    // An output kept as fp32 is written in place by the fp32 kernel.
    output_floats_ = args.tensor(output_).dtype == DType::kFloat32 && !args.kept_fp32(output_) ? elements(output_) : 0;
    output_offset_ = offset;
    offset += aligned(static_cast<uint64_t>(output_floats_) * sizeof(float));
    workspace_bytes_ = offset;
  }

  const char* kernel_name() const override { return name_.c_str(); }
  uint64_t workspace_bytes() const override { return workspace_bytes_; }
  uint64_t repacked_weight_bytes() const override { return fp32_->repacked_weight_bytes(); }
  uint64_t macs() const override { return fp32_->macs(); }
  uint64_t weight_bytes_read(uint64_t stored_bytes) const override { return fp32_->weight_bytes_read(stored_bytes); }
  // The halves are read whole into the copies before the output is written: an in-place
  // fp32 kernel stays in place on the halves.
  bool works_in_place() const override { return fp32_->works_in_place(); }
  int in_place_input() const override { return fp32_->in_place_input(); }

  void run(const RunContext& ctx) override {
    const std::vector<uint8_t*>& halves = *ctx.tensors;
    overflow_.clear();
    // int64 tensors in place; the session's table has every tensor, as this one (no allocation)
    for (size_t t = 0; t < table_.size() && t < halves.size(); ++t) table_[t] = halves[t];
    for (const Copy& c : widened_) {
      float* copy = reinterpret_cast<float*>(ctx.workspace + c.offset);
      widen(reinterpret_cast<const uint16_t*>(halves[static_cast<size_t>(c.tensor)]), copy, c.elements, ctx.threads);
      table_[static_cast<size_t>(c.tensor)] = reinterpret_cast<uint8_t*>(copy);
    }
    if (output_floats_ > 0) table_[static_cast<size_t>(output_)] = ctx.workspace + output_offset_;
    RunContext inner = ctx;
    inner.tensors = &table_;
    fp32_->run(inner);
    if (output_floats_ > 0)
      overflow_.add(narrow(reinterpret_cast<const float*>(ctx.workspace + output_offset_), reinterpret_cast<uint16_t*>(halves[static_cast<size_t>(output_)]),
                           output_floats_, ctx.threads));
  }

  void check_run() override {
    fp32_->check_run();
    overflow_.check();
  }

  void backward(const BackwardContext&) override { throw Error(overflow_.label() + ": training runs fp32 only, not fp16"); }

 private:
  struct Copy {
    int tensor;
    int64_t elements;
    uint64_t offset;  // in the workspace
  };
  std::unique_ptr<OpKernel> fp32_;
  std::string name_;
  HalfOverflow overflow_;
  int output_;
  int64_t output_floats_ = 0;
  uint64_t output_offset_ = 0, workspace_bytes_ = 0;
  std::vector<Copy> widened_;
  std::vector<uint8_t*> table_;  // the session's tensor addresses, the converted ones replaced
};

std::unique_ptr<OpKernel> wrap(std::unique_ptr<OpKernel> fp32, const OpDef& def, const KernelArgs& args) {
  if (fp32->output_aliases_input()) return fp32;  // the output is the input's halves, reinterpreted
  return std::make_unique<HalfStorageKernel>(std::move(fp32), def, args);
}

std::atomic<bool> native_routes{true};

// Whether the op reads or writes a float tensor the plan keeps as fp32: its native route
// (which takes halves only) is not built, the adapter converts only the halves.
bool touches_fp32(const OpDef& def, const KernelArgs& args) {
  if (args.kept_fp32(def.output(args.op))) return true;
  for (int t : def.inputs(args.op))
    if (args.kept_fp32(t)) return true;
  return false;
}

}  // namespace

std::unique_ptr<OpKernel> half_storage_kernel(const OpDef& def, const KernelArgs& args) {
  if (native_routes.load() && !touches_fp32(def, args)) {
    std::unique_ptr<OpKernel> kernel = def.create_cpu_kernel(args);
    if (kernel->stores_halves()) return kernel;  // a native route
    return wrap(std::move(kernel), def, args);
  }
  KernelArgs fp32 = args;  // the adapter around every kernel, native routes or not (tests)
  fp32.precision = Precision::kFp32;
  return wrap(def.create_cpu_kernel(fp32), def, args);
}

std::unique_ptr<OpKernel> half_storage_adapter(std::unique_ptr<OpKernel> fp32, const OpDef& def, const KernelArgs& args) {
  return wrap(std::move(fp32), def, args);
}

void set_half_storage_native_routes(bool on) { native_routes.store(on); }

}  // namespace edgegan
