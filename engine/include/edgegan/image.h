// 8-bit images in and out: PNG and JPEG decoding with size limits, PNG encoding.
// What `edgegan translate` and `upscale` read and write.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace edgegan {

// Interleaved 8-bit pixels, row-major: pixels[(y * width + x) * channels + c].
struct Image {
  int64_t width = 0, height = 0;
  int channels = 0;  // 1 (grey) or 3 (RGB)
  std::vector<uint8_t> pixels;
};

// What read_image accepts: checked on the file's header, before anything is decoded.
struct ImageLimits {
  int64_t max_side = 16384;               // pixels per side
  int64_t max_pixels = int64_t{1} << 26;  // width * height (64 Mpx: 192 MiB of RGB)
};

// Reads a PNG or JPEG as `channels` (1 or 3) channels. A grey file read as RGB is
// replicated; a colour file is not turned grey (Error: the model takes grey images);
// an alpha channel must be fully opaque (Error otherwise: no background is guessed).
// Any defect (not an image, truncated, too large) is an Error naming the file.
Image read_image(const std::string& path, int channels, const ImageLimits& limits = {});
// The same from bytes in memory; `what` names them in errors (fuzzing, embedded use).
Image decode_image(const uint8_t* data, size_t size, int channels, const std::string& what, const ImageLimits& limits = {});

// Writes `image` as a PNG, atomically (never a partial file).
void write_png(const std::string& path, const Image& image);

}  // namespace edgegan
