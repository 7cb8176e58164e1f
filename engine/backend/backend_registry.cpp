#include "engine/backend/backend.h"

namespace edgegan {

const char* backend_name(Backend kind) {
  switch (kind) {
    case Backend::kCpu: return "cpu";
    case Backend::kCuda: return "cuda";
    case Backend::kVulkan: return "vulkan";
  }
  return "unknown";
}

const char* to_string(Backend kind) { return backend_name(kind); }

Backend backend_from_string(const std::string& name) {
  for (Backend b : {Backend::kCpu, Backend::kCuda, Backend::kVulkan})
    if (name == backend_name(b)) return b;
  throw Error("backend '" + name + "' is none of cpu, cuda, vulkan");
}

namespace {

// The backend of a kind as this build has it (nullptr: not built), not yet checked usable.
const ComputeBackend* backend_in_build(Backend kind, int device) {
  switch (kind) {
    case Backend::kCpu: return cpu_backend();
    case Backend::kCuda: return cuda_backend();
    case Backend::kVulkan: return device < 0 ? nullptr : vulkan_backend(device);
  }
  return nullptr;
}

}  // namespace

const ComputeBackend& compute_backend(Backend kind, const char* caller, int device) {
  if (device < 0) throw Error(std::string(caller) + ": device " + std::to_string(device) + " is negative");
  const ComputeBackend* backend = backend_in_build(kind, device);
  if (!backend)
    throw Error(std::string(caller) + ": the " + (kind == Backend::kCuda ? "CUDA" : kind == Backend::kVulkan ? "Vulkan" : backend_name(kind)) +
                " backend is not available in this build; use the CPU backend");
  backend->check_usable(caller);
  return *backend;
}

bool backend_runs_precision(Backend kind, Precision precision, std::string* why) {
  const ComputeBackend* backend = backend_in_build(kind, 0);
  const std::string refusal = backend ? backend->precision_refusal(precision, /*planning=*/false) : "the backend is not in this build";
  if (why) *why = refusal;
  return refusal.empty();
}

Precision default_precision(Backend kind, int device, std::string* why) {
  if (why) why->clear();
  if (kind != Backend::kVulkan || device < 0) return Precision::kFp32;
  const ComputeBackend* backend = backend_in_build(kind, device);
  if (!backend) return Precision::kFp32;
  const std::string refusal = backend->precision_refusal(Precision::kFp16, /*planning=*/false);
  if (why) *why = refusal;
  return refusal.empty() ? Precision::kFp16 : Precision::kFp32;
}

std::string backend_convolution_tactics(Backend kind) {
  const ComputeBackend* backend = backend_in_build(kind, 0);
  return backend ? backend->convolution_tactics() : "not in this build";
}

bool backend_available(Backend kind, std::string* why, int device) {
  try {
    compute_backend(kind, "backend", device);
    return true;
  } catch (const Error& e) {
    if (why) *why = e.what();
    return false;
  }
}

}  // namespace edgegan
