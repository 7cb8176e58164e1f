// A backend: where a session's kernels run and its arena lives. The CPU is one; the
// CUDA backend plugs in at compute_backend(Backend::kCuda) without touching Session,
// SessionPlan or the memory report, which only speak to this interface.
//
// A backend says which ops it runs (a session refuses a model with an op its backend
// lacks, naming the op), builds their kernels, allocates the planned arena in its
// own memory, copies graph inputs in and outputs out, and waits for its work. Tensor
// addresses handed to kernels (RunContext) are addresses in that memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

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

class ComputeBackend {
 public:
  virtual ~ComputeBackend() = default;
  virtual Backend kind() const = 0;
  virtual const char* name() const = 0;  // "cpu", as reports print it
  virtual bool supports(const OpDef& op) const = 0;
  virtual std::unique_ptr<OpKernel> create_kernel(const OpDef& op, const KernelArgs& args) const = 0;
  // `bytes` of the backend's memory, accounted to `tracker` (64-byte aligned at least).
  virtual std::unique_ptr<DeviceBuffer> allocate(uint64_t bytes, MemoryTracker& tracker) const = 0;
  virtual void copy_to_device(uint8_t* device, const void* host, size_t bytes) const = 0;
  virtual void copy_to_host(void* host, const uint8_t* device, size_t bytes) const = 0;
  virtual void fill_zero(uint8_t* device, size_t bytes) const = 0;
  virtual void synchronize() const = 0;
};

// The backend of a kind. Throws Error ("<caller>: the CUDA backend is not available
// ...") when this build or machine has none.
const ComputeBackend& compute_backend(Backend kind, const char* caller);

// Each backend's instance (nullptr: not in this build). cpu_backend.cpp, and the
// CUDA backend's file in builds with CUDA (a stand-in returning nullptr otherwise).
const ComputeBackend* cpu_backend();
const ComputeBackend* cuda_backend();

const char* backend_name(Backend kind);  // "cpu", "cuda"

}  // namespace edgegan
