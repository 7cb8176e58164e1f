// Constants of the .egan file format that the converter (writer) and the engine
// (reader) share. docs/file-format.md describes the layout and the versioning rules.
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgegan {

// The schema version this code writes; bumped when a reader must reject files of
// another version (new fields and ops are appended without a bump). Version 2 added
// the checksum trailer (engine/model_integrity.h); version 1 files, which carry no
// checksum, still load.
constexpr uint32_t kSchemaVersion = 2;
constexpr uint32_t kOldestReadableSchemaVersion = 1;
// Every weight buffer starts at a multiple of this in the data section, so it can be
// used in place from a memory map by vector loads.
constexpr size_t kWeightAlignment = 64;

}  // namespace edgegan
