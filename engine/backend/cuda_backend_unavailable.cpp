// Builds without the CUDA backend: Backend::kCuda is refused with a message. The
// CUDA backend replaces this file with its own definition of cuda_backend().
#include "engine/backend/backend.h"

namespace edgegan {

const ComputeBackend* cuda_backend() { return nullptr; }

}  // namespace edgegan
