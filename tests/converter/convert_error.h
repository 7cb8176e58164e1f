// The converter suites' check of a refusal: the ConvertError message of converting
// `bytes`, or "" when the model converts.
#pragma once

#include <string>

#include "converter/converter.h"
#include "converter/errors.h"

namespace edgegan::testing {

inline std::string convert_error(const std::string& bytes) {
  try {
    converter::convert_onnx(bytes, "test.onnx");
  } catch (const converter::ConvertError& e) {
    return e.what();
  }
  return "";
}

}  // namespace edgegan::testing
