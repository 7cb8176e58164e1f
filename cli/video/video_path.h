// Which files `translate` and `upscale` treat as videos, decided by the extension
// (built with or without FFmpeg: without it, a video is refused by name).
#pragma once

#include <string>

namespace edgegan_cli::video {

// .mp4, .mkv, .mov, .webm, .avi, .m4v (any case).
bool is_video_path(const std::string& path);

}  // namespace edgegan_cli::video
