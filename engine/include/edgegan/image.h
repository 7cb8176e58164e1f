// 8-bit pictures in memory: the pixel type, the size limits a reader checks on a
// header, alpha planes and a Lanczos resize. What `edgegan translate` and `upscale`
// work on. Reading and writing picture files (PNG, JPEG, WebP) is not the runtime's:
// it is the codec library's, edgegan/image_io.h (libedgegan_image).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace edgegan {

// Interleaved 8-bit pixels, row-major: pixels[(y * width + x) * channels + c].
// channels: 1 grey, 2 grey + alpha, 3 RGB, 4 RGBA (alpha last, not premultiplied).
struct Image {
  int64_t width = 0, height = 0;
  int channels = 0;
  std::vector<uint8_t> pixels;
};

// What the decoders accept: checked on the file's header, before any pixel is allocated.
struct ImageLimits {
  int64_t max_side = 16384;               // pixels per side
  int64_t max_pixels = int64_t{1} << 26;  // width * height (64 Mpx: 256 MiB of RGBA)
};

// Throws Error("<what> is WxH pixels, more than edgegan reads ...") when a picture or video
// frame of that size exceeds `limits` (or has no pixels): checked on a header, before
// anything is decoded.
void check_image_size(const std::string& what, int64_t width, int64_t height, const ImageLimits& limits = {});

// An image of that size and channels, its pixels allocated (zero).
Image blank_image(int64_t width, int64_t height, int channels);

// The grey or colour part of `image` (its first 1 or 3 channels) and its alpha plane
// (1 channel; width x height of 255 when it has none).
Image colour_planes(const Image& image);
Image alpha_plane(const Image& image);
// `colour` (1 or 3 channels) with `alpha` (1 channel, same size) appended.
Image with_alpha(const Image& colour, const Image& alpha);
// True when some pixel's alpha is below 255 (false for images without alpha).
bool has_transparency(const Image& image);

// Resamples `image` to width x height with a Lanczos (a = 3) filter, separably (rows,
// then columns), edges clamped. Shrinking widens the filter by the factor so that it
// also low-passes. Results are rounded to the nearest level and clamped to 0..255.
Image resize_lanczos(const Image& image, int64_t width, int64_t height);

}  // namespace edgegan
