// libFuzzer target: ONNX bytes from outside -> edgegan-convert (parse, fold, infer,
// lower, write, load back). Any input must end in success or ConvertError.
#include <cstdint>
#include <string>

#include "converter/converter.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)edgegan::converter::convert_onnx(std::string(reinterpret_cast<const char*>(data), size), "fuzz.onnx");
  } catch (const edgegan::converter::ConvertError&) {
  }
  return 0;
}
