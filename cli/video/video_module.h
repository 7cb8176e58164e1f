// The video module: translate/upscale of videos lives in its own shared object
// (edgegan_video.so, linked to FFmpeg's libraries), which the CLI loads only when a
// video is named. Pictures, generate, convert and every other command never load
// FFmpeg: the CLI starts with a handful of libraries instead of well over a hundred,
// and runs on a machine without FFmpeg installed. The module takes the engine from
// the CLI itself (the CLI exports its edgegan symbols), so there is one engine in the
// process. This header is the contract between the two; both sides check it.
#pragma once

#include <string>

#include "cli/image_commands.h"
#include "edgegan/version.h"

namespace edgegan_cli::video {

// The module's file name, and where it sits: beside the edgegan program in a build
// tree, in <libdir>/edgegan when installed.
inline constexpr const char* kModuleFileName = "edgegan_video.so";

// Names the edgegan version and the sizes of what crosses the boundary, so a module
// from another build is refused by name instead of misread.
inline std::string module_abi() {
  return std::string(EDGEGAN_VERSION_STRING) + " args " + std::to_string(sizeof(ImageCommandArgs)) + " options " +
         std::to_string(sizeof(edgegan::ImageToImageOptions)) + " runner " + std::to_string(sizeof(edgegan::ImageToImage));
}

}  // namespace edgegan_cli::video

// The module's entry points (C names, looked up with dlsym).
extern "C" {
// module_abi() as the module was compiled.
const char* edgegan_video_module_abi();
// run_video_command (image_commands.h) inside the module. Throws edgegan::Error.
int edgegan_video_run(const edgegan_cli::ImageCommandArgs& args, const edgegan::ImageToImageOptions& options);
}
