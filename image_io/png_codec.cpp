// PNG through libpng's simplified API (png_image_*): libpng keeps its setjmp/longjmp
// error handling inside those calls and reports failure as a return value and a
// message, so no longjmp ever crosses C++ frames here. Every png_image is released
// by a guard, on success and on every error path.
#include <png.h>

#include <climits>

#include "edgegan/edgegan.h"
#include "image_io/image_codecs.h"

namespace edgegan::codec {
namespace {

// Frees what libpng holds for `image` (a no-op when it holds nothing).
struct PngImageGuard {
  png_image image{};
  PngImageGuard() { image.version = PNG_IMAGE_VERSION; }
  ~PngImageGuard() { png_image_free(&image); }
  PngImageGuard(const PngImageGuard&) = delete;
  PngImageGuard& operator=(const PngImageGuard&) = delete;
};

png_uint_32 png_format(int channels) {
  switch (channels) {
    case 1: return PNG_FORMAT_GRAY;
    case 2: return PNG_FORMAT_GA;
    case 3: return PNG_FORMAT_RGB;
    default: return PNG_FORMAT_RGBA;
  }
}

}  // namespace

Image decode_png(const uint8_t* data, size_t size, const std::string& what, const ImageLimits& limits) {
  PngImageGuard png;
  if (!png_image_begin_read_from_memory(&png.image, data, size)) throw Error(what + " is not a readable PNG (" + png.image.message + ")");
  check_image_size(what, png.image.width, png.image.height, limits);
  // The file's own channels, 8 bits each: palettes expand to RGB(A), a tRNS chunk
  // becomes an alpha channel, 16-bit samples are reduced.
  const bool colour = (png.image.format & PNG_FORMAT_FLAG_COLOR) != 0, alpha = (png.image.format & PNG_FORMAT_FLAG_ALPHA) != 0;
  const int channels = (colour ? 3 : 1) + (alpha ? 1 : 0);
  png.image.format = png_format(channels);
  Image image = blank_image(png.image.width, png.image.height, channels);
  if (!png_image_finish_read(&png.image, nullptr, image.pixels.data(), 0, nullptr))
    throw Error(what + ": the PNG data is damaged or truncated (" + png.image.message + ")");
  return image;
}

std::vector<uint8_t> encode_png(const Image& image) {
  if (image.width > INT_MAX / 4 || image.height > INT_MAX) throw Error("png: the image is too large to encode");
  PngImageGuard png;
  png.image.width = static_cast<png_uint_32>(image.width);
  png.image.height = static_cast<png_uint_32>(image.height);
  png.image.format = png_format(image.channels);
  // First the size, then the bytes: libpng writes into memory it does not own.
  png_alloc_size_t bytes = 0;
  if (!png_image_write_to_memory(&png.image, nullptr, &bytes, 0, image.pixels.data(), 0, nullptr))
    throw Error(std::string("png: encoding failed (") + png.image.message + ")");
  std::vector<uint8_t> out(bytes);
  if (!png_image_write_to_memory(&png.image, out.data(), &bytes, 0, image.pixels.data(), 0, nullptr))
    throw Error(std::string("png: encoding failed (") + png.image.message + ")");
  out.resize(bytes);
  return out;
}

}  // namespace edgegan::codec
