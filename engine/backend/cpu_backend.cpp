// The CPU backend: every op's CPU kernel (OpDef::create_cpu_kernel), host memory.
#include <cstring>

#include "engine/backend/backend.h"
#include "engine/backend/cpu_half_storage.h"

namespace edgegan {
namespace {

class HostBuffer final : public DeviceBuffer {
 public:
  HostBuffer(MemoryTracker& tracker, uint64_t bytes) : buffer_(tracker, bytes) {}
  uint8_t* data() override { return buffer_.data(); }
  uint64_t size() const override { return buffer_.size(); }

 private:
  TrackedBuffer buffer_;
};

// Host memory is the device: copies are memcpy, work runs when it is issued.
class HostStream final : public BackendStream {
 public:
  void* native() const override { return nullptr; }
  void reserve_staging(uint64_t) override {}
  void copy_to_device(uint8_t* device, const void* host, size_t bytes) override {
    if (bytes) std::memcpy(device, host, bytes);
  }
  void copy_to_host(void* host, const uint8_t* device, size_t bytes) override {
    if (bytes) std::memcpy(host, device, bytes);
  }
  void fill_zero(uint8_t* device, size_t bytes) override {
    if (bytes) std::memset(device, 0, bytes);
  }
  void synchronize() override {}
  void run_recorded(const std::function<void()>& work) override { work(); }
};

class CpuBackend final : public ComputeBackend {
 public:
  Backend kind() const override { return Backend::kCpu; }
  const char* name() const override { return "cpu"; }
  bool supports(const KernelArgs&, std::string*) const override { return true; }  // every op has a CPU kernel; loading checked its limits
  // fp16: a native half route, or the fp32 kernel behind the half-storage adapter (cpu_half_storage.h).
  std::unique_ptr<OpKernel> create_kernel(const OpDef& op, const KernelArgs& args) const override {
    return args.precision == Precision::kFp16 ? half_storage_kernel(op, args) : op.create_cpu_kernel(args);
  }
  std::unique_ptr<DeviceBuffer> allocate(uint64_t bytes, MemoryTracker& tracker) const override {
    return std::make_unique<HostBuffer>(tracker, bytes);
  }
  std::unique_ptr<BackendStream> open_stream() const override { return std::make_unique<HostStream>(); }
  std::string weight_placement() const override { return "the model file, in place"; }
  // fp16 is half storage with fp32 arithmetic, on every CPU (F16C or NEON converts
  // where the CPU has them, the scalar family elsewhere); TF32 is a GPU format.
  std::string precision_refusal(Precision precision, bool) const override {
    if (precision == Precision::kFp32 || precision == Precision::kFp16) return "";
    return std::string("the cpu backend runs fp32 and fp16, not ") + to_string(precision) + " (" + to_string(precision) + " needs --backend cuda)";
  }
};

}  // namespace

const ComputeBackend* cpu_backend() {
  static const CpuBackend backend;
  return &backend;
}

}  // namespace edgegan
