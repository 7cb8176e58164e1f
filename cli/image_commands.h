// `edgegan translate` (image-to-image: CycleGAN, pix2pix, style transfer, AnimeGAN)
// and `edgegan upscale` (super-resolution): PNG, JPEG or WebP files, folders of them
// (recursive) or a list, in; PNG, JPEG or WebP out; whole or in blended tiles
// (edgegan::ImageToImage), optionally resized to --outscale, split by --shard. A video
// in goes to a video out, frame by frame (cli/video/).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "edgegan/image_to_image.h"

namespace edgegan_cli {

struct ImageCommandArgs {
  bool upscale = false;               // which command: the model must enlarge (upscale) or keep the size (translate)
  std::string model;
  std::vector<std::string> inputs;    // files and folders
  std::string list;                   // a file naming more inputs, one per line
  std::string output;                 // a picture file (one input) or a folder
  std::string format;                 // png, jpg, webp; empty: from -o's extension (png for a folder)
  int quality = -1;                   // 1-100 for jpg/webp; -1: the default (95)
  double outscale = 0;                // > 0: final size = input x outscale (Lanczos after the model)
  std::string alpha = "lanczos";      // lanczos or model: how a picture's alpha plane is enlarged
  std::string shard;                  // "I/N": this machine's share of the sorted job list
  int threads = 0;
  std::string backend = "cpu";        // cpu, cuda or vulkan: where the model runs
  int device = 0;                     // Vulkan: the physical device's index
  std::string precision;             // fp32, tf32 or fp16 (SessionOptions::precision); "": the backend's default
  int64_t tile = 0, overlap = 16;
  std::string tile_stats;             // exact or approx: norms' and SE's statistics over the whole picture or per tile; "": exact where the backend can
  int batch = 1;                      // tiles per model run (frames of a video, tiles of a picture)
  std::string memory_limit;           // "256M", "1G", bytes; empty: none
  std::string input_range, mean, std, output_range;
  bool quiet = false;
  std::string codec;                  // video output: an FFmpeg encoder name ("" = the container's usual)
  int crf = -1;                       // video output: the encoder's quality (< 0: its default)
};

// Exit codes: 0 every picture written; 1 (kExitSomeFailed) some pictures failed, the
// others were written; 2 (kExitNothingRun) nothing was run: bad arguments, list,
// --shard, output or model (argument-parsing errors of these commands exit 2 too).
constexpr int kExitSomeFailed = 1;
constexpr int kExitNothingRun = 2;
int run_image_command(const ImageCommandArgs& args);

// Throws edgegan::Error when the model does not do what the command says: `upscale`
// with a model that keeps the size, `translate` with one that enlarges.
void check_model_fits_command(const edgegan::ImageToImage& runner, const ImageCommandArgs& args);

// A video in, a video out (cli/video/): the same model options, every frame.
int run_video_command(const ImageCommandArgs& args, const edgegan::ImageToImageOptions& options);

// "256M", "1.5G", "512MiB", "1000000" -> bytes. Throws edgegan::Error.
uint64_t parse_byte_size(const std::string& text);

}  // namespace edgegan_cli
