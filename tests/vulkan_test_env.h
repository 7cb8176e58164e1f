// The environment every Vulkan test runs in, set by the test program itself before any
// Vulkan device is opened (ctest's per-test ENVIRONMENT does not survive gtest's test
// discovery as a list): lavapipe on two threads (CI's cores) and the Khronos validation
// layer on, each test then expecting it to have reported nothing. A value already in
// the environment is kept (EDGEGAN_VULKAN_VALIDATION=0 turns the layer off by hand).
#pragma once

#include <cstdlib>

namespace edgegan::testing {

inline const bool kVulkanTestEnvironment = [] {
  ::setenv("LP_NUM_THREADS", "2", 0);
  ::setenv("EDGEGAN_VULKAN_VALIDATION", "1", 0);
  return true;
}();

}  // namespace edgegan::testing
