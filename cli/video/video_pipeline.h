// `edgegan translate` / `upscale` on a video: every frame through the model, the
// other streams copied, the output written atomically. Decoding, the model and
// encoding run on three threads joined by short queues, so the model is the only
// thing a frame waits for.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "cli/video/video_writer.h"
#include "edgegan/image_to_image.h"

namespace edgegan_cli::video {

struct VideoJob {
  std::string input, output;
  EncoderChoice encoder;
  bool quiet = false;
};

struct VideoResult {
  int64_t frames = 0;
  int width = 0, height = 0;
  double seconds = 0;  // wall time of the whole job
};

// Runs the job; `log` gets the summary lines, `progress` the progress bar. Error (and
// nothing written) on any failure, or when interrupted by SIGINT/SIGTERM.
VideoResult run_video(const edgegan::ImageToImage& runner, const VideoJob& job, std::ostream& log, std::ostream& progress);

}  // namespace edgegan_cli::video
