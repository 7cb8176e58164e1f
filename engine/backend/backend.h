// A backend: where a session's kernels run and its arena lives. The CPU is one; the
// CUDA backend plugs in at compute_backend(Backend::kCuda) without touching Session,
// SessionPlan or the memory report, which only speak to this interface.
//
// A backend says which ops it runs (a session refuses a model with an op its backend
// lacks, naming the op), builds their kernels, and allocates the planned arena in its
// own memory. Each executor opens a BackendStream of its own: the queue its kernels
// run on, through which graph inputs are copied in and outputs out. Tensor addresses
// handed to kernels (RunContext) are addresses in the backend's memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "edgegan/edgegan.h"
#include "engine/memory_tracker.h"
#include "engine/ops/op_def.h"

namespace edgegan {

// A block of a backend's memory (the arena); released when destroyed.
class DeviceBuffer {
 public:
  virtual ~DeviceBuffer() = default;
  virtual uint8_t* data() = 0;
  virtual uint64_t size() const = 0;
};

// One executor's queue of work on its backend (a CUDA stream): copies and kernels run
// in the order they are issued; the host waits in synchronize() and copy_to_host().
class BackendStream {
 public:
  virtual ~BackendStream() = default;
  virtual void* native() const = 0;  // what kernels launch on: a cudaStream_t; nullptr on the CPU
  // Host-side staging for the copies (CUDA: pinned memory), reserved once so that no
  // copy allocates; `bytes` is the largest single copy the executor will make. It is
  // host memory outside the model's accounting (the size of one input or output).
  virtual void reserve_staging(uint64_t bytes) = 0;
  virtual void copy_to_device(uint8_t* device, const void* host, size_t bytes) = 0;  // `host` is free again on return
  virtual void copy_to_host(void* host, const uint8_t* device, size_t bytes) = 0;    // complete on return
  virtual void fill_zero(uint8_t* device, size_t bytes) = 0;
  virtual void synchronize() = 0;
  // Runs `work`, which only issues kernels on this stream. CUDA records it as a graph
  // on the first call and replays the graph afterwards (one launch per run); the CPU
  // runs it.
  virtual void run_recorded(const std::function<void()>& work) = 0;
};

class ComputeBackend {
 public:
  virtual ~ComputeBackend() = default;
  virtual Backend kind() const = 0;
  virtual const char* name() const = 0;  // "cpu", "cuda", as reports print it
  // Whether it runs this op as the model has it: its kind, and the shapes, types and
  // attributes `args` carries (the op, the model's tensors, the batch). If not, `why`
  // says what the backend lacks; the session then refuses the model, naming the op.
  virtual bool supports(const KernelArgs& args, std::string* why) const = 0;
  virtual std::unique_ptr<OpKernel> create_kernel(const OpDef& op, const KernelArgs& args) const = 0;
  // `bytes` of the backend's memory, accounted to `tracker` (64-byte aligned at least).
  virtual std::unique_ptr<DeviceBuffer> allocate(uint64_t bytes, MemoryTracker& tracker) const = 0;
  virtual std::unique_ptr<BackendStream> open_stream() const = 0;
  // Throws Error ("<caller>: the CUDA backend has no usable device: <why>") when the
  // backend is built but cannot run here.
  virtual void check_usable(const char* /*caller*/) const {}
  // Why this backend cannot run `precision` ("" when it can). `planning`: only a
  // memory report is asked for, which may plan a precision the kernels do not run yet.
  virtual std::string precision_refusal(Precision precision, bool planning) const = 0;
  // backend_convolution_tactics() of this backend ("" when it has no choice to make).
  virtual std::string convolution_tactics() const { return ""; }
  // Whether the arena and the kernels' weight copies live in device memory (counted by
  // MemoryTracker::device_bytes) rather than in host memory.
  virtual bool device_memory() const { return false; }
  // Where a session's kernels read the weights: "the model file, in place" (CPU),
  // "copied to the device" or "mapped from the model file" (CUDA).
  virtual std::string weight_placement() const = 0;
};

// The backend of a kind. Throws Error ("<caller>: the CUDA backend is not available
// ...") when this build or machine has none.
// `device` is the physical device's index (Vulkan; the others have one device).
const ComputeBackend& compute_backend(Backend kind, const char* caller, int device = 0);

// Each backend's instance (nullptr: not in this build). cpu_backend.cpp, and the
// CUDA backend's file in builds with CUDA (a stand-in returning nullptr otherwise).
const ComputeBackend* cpu_backend();
const ComputeBackend* cuda_backend();
// The Vulkan backend on physical device `device` (vulkan/vulkan_backend.cpp, or a
// stand-in returning nullptr in builds without Vulkan).
const ComputeBackend* vulkan_backend(int device);
// Messages the Vulkan validation layer reported in this process (it is on where the
// environment sets EDGEGAN_VULKAN_VALIDATION=1; 0 in builds without Vulkan).
int vulkan_validation_messages();

const char* backend_name(Backend kind);  // "cpu", "cuda", "vulkan"

}  // namespace edgegan
