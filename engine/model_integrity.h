// Checksums of an .egan file (schema version 2 and later), so a model damaged on
// an SD card or by an interrupted update is refused instead of run.
//
// A version-2 file ends in a 32-byte trailer after its data section:
//   [ "EGANXXH3" ][ u64 data_bytes ][ u64 XXH3-64 of the data section ]
//   [ u64 XXH3-64 of the graph section: bytes [0, data_begin), the size-prefixed
//     flatbuffer and its zero padding ]
// (little-endian). The schema version inside the graph says a trailer must be
// there, and the trailer's graph checksum covers that version, so no single
// corruption (a flip in the magic, a truncation, a changed version) can make a
// version-2 file pass for an older file that carries no checksum.
// docs/file-format.md describes the layout; engine/model_validate.cpp checks it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace edgegan {

// First schema version whose files carry the trailer.
constexpr uint32_t kFirstChecksummedSchemaVersion = 2;
constexpr size_t kTrailerSize = 32;
inline constexpr char kTrailerMagic[8] = {'E', 'G', 'A', 'N', 'X', 'X', 'H', '3'};

struct Trailer {
  uint64_t data_bytes = 0;
  uint64_t data_checksum = 0;
  uint64_t graph_checksum = 0;
};

// XXH3-64 (seed 0) of `size` bytes.
uint64_t checksum(const uint8_t* bytes, size_t size);

// Where the data section of a file whose size prefix says `graph_bytes` begins.
size_t data_section_begin(uint64_t graph_bytes);

// Reads the trailer if the file ends in one (its magic in place); false otherwise.
bool read_trailer(const uint8_t* file, size_t file_size, Trailer* trailer);

// Appends the trailer to a file image [graph][padding][data section], computing
// both checksums. The graph must already say kSchemaVersion.
void seal_model_file(std::vector<uint8_t>& file);

}  // namespace edgegan
