#include "engine/backend/backend.h"

namespace edgegan {

const char* backend_name(Backend kind) {
  switch (kind) {
    case Backend::kCpu: return "cpu";
    case Backend::kCuda: return "cuda";
  }
  return "unknown";
}

const ComputeBackend& compute_backend(Backend kind, const char* caller) {
  const ComputeBackend* backend = nullptr;
  switch (kind) {
    case Backend::kCpu: backend = cpu_backend(); break;
    case Backend::kCuda: backend = cuda_backend(); break;
  }
  if (!backend)
    throw Error(std::string(caller) + ": the " + (kind == Backend::kCuda ? "CUDA" : backend_name(kind)) +
                " backend is not available in this build; use the CPU backend");
  backend->check_usable(caller);
  return *backend;
}

bool backend_available(Backend kind, std::string* why) {
  try {
    compute_backend(kind, "backend");
    return true;
  } catch (const Error& e) {
    if (why) *why = e.what();
    return false;
  }
}

}  // namespace edgegan
