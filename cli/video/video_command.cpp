// `edgegan translate` / `upscale` with a video in: the model checked against the
// command, the output named a video, then the pipeline (video_pipeline.h).
#include <iostream>

#include "cli/image_commands.h"
#include "cli/model_loading.h"
#include "cli/video/video_path.h"
#include "cli/video/video_pipeline.h"
#include "edgegan/io.h"

namespace edgegan_cli {

int run_video_command(const ImageCommandArgs& a, const edgegan::ImageToImageOptions& options) {
  if (!video::is_video_path(a.output))
    throw edgegan::Error("-o must name a video file (.mp4, .mkv, .mov, .webm, .avi or .m4v) for the video '" + a.inputs[0] + "'");
  edgegan::ensure_not_an_input(a.output, {a.model, a.inputs[0]});
  auto model = load_model(a.model);
  const edgegan::ImageToImage runner(model, options);
  check_model_fits_command(runner, a);
  video::VideoJob job;
  job.input = a.inputs[0];
  job.output = a.output;
  job.encoder = {a.codec, a.crf};
  job.quiet = a.quiet;
  video::run_video(runner, job, std::cout, std::cerr);
  return 0;
}

}  // namespace edgegan_cli
