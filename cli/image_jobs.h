// The job list of `edgegan translate` / `upscale`: which picture goes to which output
// file. Inputs are files and folders (walked recursively, subfolders kept under the
// output folder), given as arguments or by --list; the list is sorted by input path so
// that --shard I/N splits it the same way on every machine.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "edgegan/image.h"

namespace edgegan_cli {

struct ImageJob {
  std::filesystem::path input, output;
};

struct Shard {
  int index = 1, count = 1;  // 1-based: shard `index` of `count`
};

// "I/N" with 1 <= I <= N <= 65536. Throws edgegan::Error.
Shard parse_shard(const std::string& text);

// The non-empty lines of a --list file (surrounding blanks trimmed). Throws edgegan::Error.
std::vector<std::string> read_list_file(const std::string& path);

// Every picture to run and where it goes, sorted by input path. `to_folder`: outputs
// are <output>/<path under its input folder>/<stem>.<extension>; otherwise the one
// input goes to `output` itself. Throws edgegan::Error for a missing input, a folder
// without pictures, or two inputs that would write the same file.
std::vector<ImageJob> list_jobs(const std::vector<std::string>& inputs, const std::string& output, bool to_folder, const std::string& extension);

// The jobs of one shard: those whose index in the sorted list is index - 1 modulo count.
std::vector<ImageJob> shard_jobs(const std::vector<ImageJob>& jobs, const Shard& shard);

// Whether `path` names a picture edgegan reads (.png, .jpg, .jpeg, .webp; any case).
bool is_picture_path(const std::filesystem::path& path);

}  // namespace edgegan_cli
