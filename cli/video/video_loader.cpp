// run_video_command for the CLI: finds the video module (video_module.h), loads it
// the first time a video is named, checks it was built with this CLI, and runs the
// job in it. Every way of failing is one line saying which file and why.
#include <dlfcn.h>
#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "cli/image_commands.h"
#include "cli/video/video_module.h"

namespace edgegan_cli {
namespace {

namespace fs = std::filesystem;

#ifdef EDGEGAN_VIDEO_MODULE_DIR
// The module beside the program (a build tree), else where `cmake --install` puts it
// relative to the program's folder.
fs::path find_module() {
  std::error_code ec;
  const fs::path program = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw edgegan::Error(std::string("cannot find the video module: /proc/self/exe: ") + ec.message());
  const fs::path beside = program.parent_path() / video::kModuleFileName;
  const fs::path installed = (program.parent_path() / EDGEGAN_VIDEO_MODULE_DIR / video::kModuleFileName).lexically_normal();
  if (fs::exists(beside, ec)) return beside;
  if (fs::exists(installed, ec)) return installed;
  throw edgegan::Error("this edgegan's video module is missing (looked for '" + beside.string() + "' and '" + installed.string() +
                       "'): install edgegan with its lib/edgegan folder");
}

using RunVideo = int (*)(const ImageCommandArgs&, const edgegan::ImageToImageOptions&);

// Loaded once; stays loaded (its code may still be on a thread's stack at exit).
RunVideo load_module() {
  static RunVideo run = [] {
    const fs::path path = find_module();
    // RTLD_NOW: a missing FFmpeg library or symbol is reported here, not mid-video.
    void* module = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!module)
      throw edgegan::Error("cannot load the video module '" + path.string() + "' (is FFmpeg installed? libavformat, libavcodec, libswscale, libavutil): " +
                           dlerror());
    auto abi = reinterpret_cast<const char* (*)()>(dlsym(module, "edgegan_video_module_abi"));
    auto entry = reinterpret_cast<RunVideo>(dlsym(module, "edgegan_video_run"));
    if (!abi || !entry) throw edgegan::Error("'" + path.string() + "' is not an edgegan video module");
    if (abi() != video::module_abi())
      throw edgegan::Error("the video module '" + path.string() + "' was built for another edgegan (" + abi() + ", this one " + video::module_abi() + ")");
    return entry;
  }();
  return run;
}
#endif

}  // namespace

int run_video_command(const ImageCommandArgs& a, const edgegan::ImageToImageOptions& options) {
#ifdef EDGEGAN_VIDEO_MODULE_DIR
  return load_module()(a, options);
#else
  (void)options;
  throw edgegan::Error("'" + a.inputs[0] + "' is a video, and this edgegan was built without FFmpeg's libraries (libavformat, libavcodec, "
                       "libswscale, libavutil): install their -dev packages and build again");
#endif
}

}  // namespace edgegan_cli
