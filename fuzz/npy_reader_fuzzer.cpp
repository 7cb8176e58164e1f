// libFuzzer target: .npy bytes from outside -> edgegan::parse_npy.
#include <cstdint>

#include "edgegan/io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)edgegan::parse_npy(data, size, "fuzz.npy");
  } catch (const edgegan::Error&) {
  }
  return 0;
}
