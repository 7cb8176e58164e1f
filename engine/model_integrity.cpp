#include "engine/model_integrity.h"

#include <cstring>

#include "engine/format/egan_format.h"
#include "flatbuffers/flatbuffers.h"

// Header-only use of xxHash: nothing to link, the same on every target the
// engine cross-builds for.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace edgegan {
namespace {

void put_u64(uint8_t* at, uint64_t v) {
  for (int i = 0; i < 8; ++i) at[i] = static_cast<uint8_t>(v >> (8 * i));
}

uint64_t get_u64(const uint8_t* at) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | at[i];
  return v;
}

}  // namespace

uint64_t checksum(const uint8_t* bytes, size_t size) { return XXH3_64bits(bytes, size); }

size_t data_section_begin(uint64_t graph_bytes) {
  const uint64_t end = sizeof(flatbuffers::uoffset_t) + graph_bytes;
  return static_cast<size_t>((end + kWeightAlignment - 1) / kWeightAlignment * kWeightAlignment);
}

bool read_trailer(const uint8_t* file, size_t file_size, Trailer* trailer) {
  if (file_size < kTrailerSize) return false;
  const uint8_t* t = file + file_size - kTrailerSize;
  if (std::memcmp(t, kTrailerMagic, sizeof kTrailerMagic) != 0) return false;
  trailer->data_bytes = get_u64(t + 8);
  trailer->data_checksum = get_u64(t + 16);
  trailer->graph_checksum = get_u64(t + 24);
  return true;
}

void seal_model_file(std::vector<uint8_t>& file) {
  const size_t data_begin = data_section_begin(flatbuffers::ReadScalar<flatbuffers::uoffset_t>(file.data()));
  const size_t data_bytes = file.size() - data_begin;
  uint8_t t[kTrailerSize];
  std::memcpy(t, kTrailerMagic, sizeof kTrailerMagic);
  put_u64(t + 8, data_bytes);
  put_u64(t + 16, checksum(file.data() + data_begin, data_bytes));
  put_u64(t + 24, checksum(file.data(), data_begin));
  file.insert(file.end(), t, t + kTrailerSize);
}

}  // namespace edgegan
