// 8-bit pictures in and out: PNG, JPEG and WebP decoding (libpng, libjpeg-turbo,
// libwebp) behind size limits checked on the header, encoding to the same three
// formats through the atomic writer, and a Lanczos resize. What `edgegan translate`
// and `upscale` read and write.
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

enum class ImageFormat { kPng, kJpeg, kWebp };

// "png", "jpg"/"jpeg", "webp" (any case). Throws Error naming the choices.
ImageFormat parse_image_format(const std::string& name);
// From a path's extension (.png, .jpg, .jpeg, .webp; any case); false when it is none of them.
bool image_format_of_path(const std::string& path, ImageFormat* format);
// "png", "jpg", "webp": the extension a folder run gives its outputs.
const char* image_format_extension(ImageFormat format);

// Throws Error("<what> is WxH pixels, more than edgegan reads ...") when a picture or video
// frame of that size exceeds `limits` (or has no pixels): checked on a header, before
// anything is decoded.
void check_image_size(const std::string& what, int64_t width, int64_t height, const ImageLimits& limits = {});

// Reads a PNG, JPEG or WebP (recognised by its bytes, not its name) with the file's
// own channels: PNG 1-4 (16-bit samples are reduced to 8, palettes expanded), JPEG
// 1 or 3, WebP 3 or 4. Any defect (not an image, truncated, corrupt, too large,
// animated WebP) is an Error naming the file and the problem; nothing is half-read.
Image read_image(const std::string& path, const ImageLimits& limits = {});
// The same from bytes in memory; `what` names them in errors (fuzzing, embedded use).
Image decode_image(const uint8_t* data, size_t size, const std::string& what, const ImageLimits& limits = {});

struct EncodeOptions {
  ImageFormat format = ImageFormat::kPng;
  // JPEG and WebP: 1-100. WebP at 100 is lossless; PNG is always lossless.
  int quality = 95;
};

// Encodes `image` in memory. JPEG has no alpha: an image with a transparent pixel is
// refused (Error), a fully opaque alpha plane is dropped.
std::vector<uint8_t> encode_image(const Image& image, const EncodeOptions& options);
// Writes `image` atomically (never a partial file); `what` names it in errors.
void write_image(const std::string& path, const Image& image, const EncodeOptions& options);
// write_image as PNG.
void write_png(const std::string& path, const Image& image);

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
