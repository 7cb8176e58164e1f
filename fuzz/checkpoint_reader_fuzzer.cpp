// libFuzzer target: checkpoint bytes from outside (PyTorch zip or legacy archive,
// safetensors) -> the restricted reader and the architecture detection.
#include <cstdint>
#include <string>

#include "converter/checkpoint/architecture.h"
#include "converter/checkpoint/checkpoint_reader.h"
#include "converter/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto sd = edgegan::converter::checkpoint::read_checkpoint(std::string(reinterpret_cast<const char*>(data), size), "fuzz.pth");
    (void)edgegan::converter::checkpoint::detect_architecture(sd);
  } catch (const edgegan::converter::ConvertError&) {
  }
  return 0;
}
