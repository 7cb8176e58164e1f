#include "cli/image_jobs.h"

#include <algorithm>
#include <fstream>
#include <map>

#include "edgegan/edgegan.h"
#include "edgegan/image_io.h"

namespace edgegan_cli {
namespace fs = std::filesystem;

bool is_picture_path(const fs::path& path) {
  edgegan::ImageFormat format;
  return edgegan::image_format_of_path(path.filename().string(), &format);
}

Shard parse_shard(const std::string& text) {
  const std::string usage = "--shard '" + text + "' is not I/N with 1 <= I <= N (e.g. 2/4: the second of four machines)";
  const size_t slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size()) throw edgegan::Error(usage);
  auto number = [&](const std::string& part) {
    if (part.size() > 5 || !std::all_of(part.begin(), part.end(), [](unsigned char c) { return c >= '0' && c <= '9'; })) throw edgegan::Error(usage);
    return std::stoi(part);
  };
  Shard s{number(text.substr(0, slash)), number(text.substr(slash + 1))};
  if (s.count < 1 || s.count > 65536 || s.index < 1 || s.index > s.count) throw edgegan::Error(usage);
  return s;
}

std::vector<std::string> read_list_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw edgegan::Error("cannot read the list '" + path + "'");
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    const size_t first = line.find_first_not_of(" \t\r"), last = line.find_last_not_of(" \t\r");
    if (first != std::string::npos) lines.push_back(line.substr(first, last - first + 1));
  }
  if (in.bad()) throw edgegan::Error("cannot read the list '" + path + "'");
  if (lines.empty()) throw edgegan::Error("the list '" + path + "' names no pictures");
  return lines;
}

std::vector<ImageJob> list_jobs(const std::vector<std::string>& inputs, const std::string& output, bool to_folder, const std::string& extension) {
  std::vector<ImageJob> jobs;
  auto target = [&](const fs::path& under_output) { return fs::path(output) / under_output.parent_path() / (under_output.stem().string() + "." + extension); };
  for (const std::string& in : inputs) {
    std::error_code ec;
    if (fs::is_directory(in, ec)) {
      const size_t before = jobs.size();
      // Recursive, symlinked folders not followed (no cycles); hidden files are taken like any other.
      for (auto it = fs::recursive_directory_iterator(in, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        if (it->is_regular_file() && is_picture_path(it->path())) jobs.push_back({it->path(), target(it->path().lexically_relative(in))});
      if (ec) throw edgegan::Error("cannot list '" + in + "': " + ec.message());
      if (jobs.size() == before) throw edgegan::Error("'" + in + "' holds no .png, .jpg, .jpeg or .webp files");
    } else if (fs::exists(in, ec)) {
      jobs.push_back({fs::path(in), to_folder ? target(fs::path(in).filename()) : fs::path(output)});
    } else {
      throw edgegan::Error("'" + in + "' does not exist");
    }
  }
  std::sort(jobs.begin(), jobs.end(), [](const ImageJob& a, const ImageJob& b) { return a.input.string() < b.input.string(); });
  std::map<fs::path, const ImageJob*> writers;
  for (const ImageJob& job : jobs) {
    const auto [it, fresh] = writers.emplace(job.output.lexically_normal(), &job);
    if (!fresh)
      throw edgegan::Error("'" + it->second->input.string() + "' and '" + job.input.string() + "' would both be written to " + job.output.string());
  }
  return jobs;
}

std::vector<ImageJob> shard_jobs(const std::vector<ImageJob>& jobs, const Shard& shard) {
  std::vector<ImageJob> mine;
  for (size_t k = static_cast<size_t>(shard.index - 1); k < jobs.size(); k += static_cast<size_t>(shard.count)) mine.push_back(jobs[k]);
  return mine;
}

}  // namespace edgegan_cli
