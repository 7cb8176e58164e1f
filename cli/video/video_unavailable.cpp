// Built instead of the video pipeline when FFmpeg's development libraries were not
// found: a video in is refused by name.
#include "cli/image_commands.h"

namespace edgegan_cli {

int run_video_command(const ImageCommandArgs& a, const edgegan::ImageToImageOptions&) {
  throw edgegan::Error("'" + a.inputs[0] + "' is a video, and this edgegan was built without FFmpeg's libraries (libavformat, libavcodec, "
                       "libswscale, libavutil): install their -dev packages and build again");
}

}  // namespace edgegan_cli
