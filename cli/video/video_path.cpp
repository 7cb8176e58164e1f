#include "cli/video/video_path.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

namespace edgegan_cli::video {

bool is_video_path(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".mp4" || ext == ".mkv" || ext == ".mov" || ext == ".webm" || ext == ".avi" || ext == ".m4v";
}

}  // namespace edgegan_cli::video
