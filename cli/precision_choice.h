// --precision as every subcommand resolves it: the value given, or, when none is, the
// backend's default (edgegan::default_precision: fp16 on Vulkan where the device has
// 16-bit storage, else fp32), with the reason a Vulkan device fell back to fp32.
#pragma once

#include <string>

#include "edgegan/edgegan.h"

namespace edgegan_cli {

struct PrecisionChoice {
  edgegan::Precision precision = edgegan::Precision::kFp32;
  std::string fallback;  // why the default is fp32 where fp16 was the preference; "" else
  // "fp16", or "fp32 (default: <why>)" after a fallback, for bench and --verbose.
  std::string describe() const;
};

// `given`: --precision's value, "" when the option was not given.
PrecisionChoice choose_precision(const std::string& given, edgegan::Backend backend, int device);

}  // namespace edgegan_cli
