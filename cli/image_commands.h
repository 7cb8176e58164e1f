// `edgegan translate` (image-to-image: CycleGAN, pix2pix, style transfer, AnimeGAN)
// and `edgegan upscale` (super-resolution): PNG or JPEG files, or folders of them, in;
// PNG out; whole or in blended tiles (edgegan::ImageToImage).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace edgegan_cli {

struct ImageCommandArgs {
  bool upscale = false;               // which command: the model must enlarge (upscale) or keep the size (translate)
  std::string model;
  std::vector<std::string> inputs;    // files and folders
  std::string output;                 // a .png file (one input) or a folder
  int threads = 0;
  int64_t tile = 0, overlap = 16;
  std::string memory_limit;           // "256M", "1G", bytes; empty: none
  std::string input_range, mean, std, output_range;
  bool quiet = false;
};

int run_image_command(const ImageCommandArgs& args);

// "256M", "1.5G", "512MiB", "1000000" -> bytes. Throws edgegan::Error.
uint64_t parse_byte_size(const std::string& text);

}  // namespace edgegan_cli
