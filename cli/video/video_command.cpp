// `edgegan translate` / `upscale` with a video in, the video module's entry point
// (video_module.h): the model checked against the command, the output named a video,
// then the pipeline (video_pipeline.h).
#include <iostream>

#include "cli/image_commands.h"
#include "cli/model_loading.h"
#include "cli/video/video_module.h"
#include "cli/video/video_path.h"
#include "cli/video/video_pipeline.h"
#include "edgegan/io.h"

extern "C" const char* edgegan_video_module_abi() {
  static const std::string abi = edgegan_cli::video::module_abi();
  return abi.c_str();
}

extern "C" int edgegan_video_run(const edgegan_cli::ImageCommandArgs& a, const edgegan::ImageToImageOptions& options) {
  using namespace edgegan_cli;
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
