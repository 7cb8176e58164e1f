// Builds without the Vulkan backend (no glslc, Vulkan headers or volk found, or
// EDGEGAN_WITH_VULKAN=OFF): Backend::kVulkan is refused with a message. The Vulkan
// backend replaces this file with its own definition of vulkan_backend().
#include "engine/backend/backend.h"

namespace edgegan {

const ComputeBackend* vulkan_backend(int) { return nullptr; }
int vulkan_validation_messages() { return 0; }

}  // namespace edgegan
