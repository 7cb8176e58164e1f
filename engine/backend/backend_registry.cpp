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

const ComputeBackend& compute_backend(Backend kind, const char* caller, int device) {
  if (device < 0) throw Error(std::string(caller) + ": device " + std::to_string(device) + " is negative");
  const ComputeBackend* backend = nullptr;
  switch (kind) {
    case Backend::kCpu: backend = cpu_backend(); break;
    case Backend::kCuda: backend = cuda_backend(); break;
    case Backend::kVulkan: backend = vulkan_backend(device); break;
  }
  if (!backend)
    throw Error(std::string(caller) + ": the " + (kind == Backend::kCuda ? "CUDA" : kind == Backend::kVulkan ? "Vulkan" : backend_name(kind)) +
                " backend is not available in this build; use the CPU backend");
  backend->check_usable(caller);
  return *backend;
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
