// File helpers used by the CLI, samples and tests: NumPy .npy tensors and PNG grids.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "edgegan/edgegan.h"

namespace edgegan {

// Reads a little-endian, C-order .npy file of float32 or int64 (int32 is widened).
// The result has Layout::kRowMajor and the file's shape. Throws Error on any defect.
Tensor read_npy(const std::string& path);
// Parses an in-memory .npy image (read_npy uses it; exposed for fuzzing).
Tensor parse_npy(const uint8_t* data, size_t size, const std::string& what);
void write_npy(const std::string& path, const Tensor& tensor);

// Writes `bytes` to `path` via a temporary file in the same directory and an
// atomic rename, so a failed write never leaves a truncated file behind. A
// temporary left by a writer that was killed (`.edgegan-tmp-<pid>-*`, its pid gone,
// untouched for 10 minutes, same owner) is removed by the next write to that directory.
void write_file_atomically(const std::string& path, const void* bytes, size_t size);

// Throws Error when `output` is the same file as one of `inputs` (same device and
// inode, so hard links and symlinks count): a command never replaces its input.
void ensure_not_an_input(const std::string& output, const std::vector<std::string>& inputs);

}  // namespace edgegan
