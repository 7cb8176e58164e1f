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

bool backend_runs_precision(Backend kind, Precision precision, std::string* why) {
  const ComputeBackend* backend = kind == Backend::kCuda ? cuda_backend() : cpu_backend();
  const std::string refusal = backend ? backend->precision_refusal(precision, /*planning=*/false) : "the backend is not in this build";
  if (why) *why = refusal;
  return refusal.empty();
}

std::string backend_convolution_tactics(Backend kind) {
  const ComputeBackend* backend = kind == Backend::kCuda ? cuda_backend() : cpu_backend();
  return backend ? backend->convolution_tactics() : "not in this build";
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
