#include "cli/precision_choice.h"

namespace edgegan_cli {

std::string PrecisionChoice::describe() const {
  return std::string(edgegan::to_string(precision)) + (fallback.empty() ? "" : " (by default: " + fallback + ")");
}

PrecisionChoice choose_precision(const std::string& given, edgegan::Backend backend, int device) {
  PrecisionChoice c;
  if (!given.empty()) {
    c.precision = edgegan::precision_from_string(given);
    return c;
  }
  c.precision = edgegan::default_precision(backend, device, &c.fallback);
  return c;
}

}  // namespace edgegan_cli
