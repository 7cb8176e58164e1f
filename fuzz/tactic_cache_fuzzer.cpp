// The tactic cache file (engine/tactic_cache.h) from hostile bytes: parsing never reads
// outside them nor throws; what it accepts serializes back to the same bytes.
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>

#include "engine/tactic_cache.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const edgegan::TacticCacheKey key{"fuzz GPU", 1, 90000};
  std::string warning;
  const edgegan::TacticCache cache = edgegan::TacticCache::parse(std::span(data, size), key, &warning);
  if (warning.empty() && cache.serialize() != std::vector<uint8_t>(data, data + size)) std::abort();
  return 0;
}
