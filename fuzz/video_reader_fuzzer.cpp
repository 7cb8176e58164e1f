// libFuzzer target: video file bytes from outside -> the CLI's VideoReader (FFmpeg's
// demuxers and decoders, then edgegan's colour conversion and truncation checks), as
// `translate`/`upscale` read a video. The bytes go through an in-memory file, since
// FFmpeg opens by name; frames are capped in size and number so each run stays short.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "cli/video/video_reader.h"

namespace {

bool copy_every_stream(const AVStream*, void*) { return true; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const int quiet = (av_log_set_level(AV_LOG_QUIET), 0);
  (void)quiet;
  const int fd = memfd_create("fuzz_video", 0);
  if (fd < 0) return 0;
  size_t written = 0;
  while (written < size) {
    const ssize_t n = write(fd, data + written, size - written);
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  try {
    edgegan::ImageLimits limits;
    limits.max_side = 512;
    limits.max_pixels = 512 * 512;
    for (int channels : {3, 1}) {
      edgegan_cli::video::VideoReader reader(path, channels, limits);
      for (int items = 0; items < 16; ++items)
        if (!reader.next(copy_every_stream, nullptr)) break;
    }
  } catch (const edgegan::Error&) {
  }
  close(fd);
  return 0;
}
