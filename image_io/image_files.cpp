// read_image/decode_image and write_image/encode_image: recognise the format by its
// signature, refuse oversized headers before any codec runs, and hand over to the
// codec (png_codec.cpp, jpeg_codec.cpp, webp_codec.cpp).
#include <algorithm>
#include <cctype>
#include <cstring>

#include "edgegan/edgegan.h"
#include "edgegan/image_io.h"
#include "edgegan/io.h"
#include "image_io/image_codecs.h"
#include "engine/mapped_file.h"

namespace edgegan {
namespace {

uint32_t be16(const uint8_t* p) { return uint32_t{p[0]} << 8 | p[1]; }
uint32_t be32(const uint8_t* p) { return be16(p) << 16 | be16(p + 2); }

const uint8_t kPngSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

bool is_png(const uint8_t* d, size_t n) { return n >= 8 && std::memcmp(d, kPngSignature, 8) == 0; }
bool is_jpeg(const uint8_t* d, size_t n) { return n >= 3 && d[0] == 0xFF && d[1] == 0xD8 && d[2] == 0xFF; }
bool is_webp(const uint8_t* d, size_t n) { return n >= 12 && std::memcmp(d, "RIFF", 4) == 0 && std::memcmp(d + 8, "WEBP", 4) == 0; }

// The size a PNG or JPEG header declares, read by hand so that the limits hold (and
// are named) before a library sees the file. false: no size found (the codec then
// says what is wrong). WebP's header is read by libwebp without allocating.
bool declared_size(const uint8_t* d, size_t n, int64_t* w, int64_t* h) {
  if (n >= 24 && is_png(d, n) && std::memcmp(d + 12, "IHDR", 4) == 0) {
    *w = be32(d + 16);
    *h = be32(d + 20);
    return true;
  }
  if (!is_jpeg(d, n)) return false;
  for (size_t i = 2; i + 9 < n;) {  // walk the marker segments to the frame header (SOFn)
    if (d[i] != 0xFF) return false;
    const uint8_t marker = d[i + 1];
    if (marker == 0xFF) {  // fill byte
      ++i;
      continue;
    }
    const bool sof = marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
    if (sof) {
      *h = be16(d + i + 5);
      *w = be16(d + i + 7);
      return true;
    }
    i += 2 + be16(d + i + 2);
  }
  return false;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

void check_layout(const Image& image, const std::string& who) {
  if (image.channels < 1 || image.channels > 4) throw Error(who + ": images have 1 to 4 channels, not " + std::to_string(image.channels));
  if (image.width < 1 || image.height < 1 || image.width > (int64_t{1} << 30) || image.height > (int64_t{1} << 30) ||
      image.pixels.size() != static_cast<size_t>(image.width) * static_cast<size_t>(image.height) * static_cast<size_t>(image.channels))
    throw Error(who + ": the image's size and its pixels disagree");
}

}  // namespace


ImageFormat parse_image_format(const std::string& name) {
  const std::string n = lower(name);
  if (n == "png") return ImageFormat::kPng;
  if (n == "jpg" || n == "jpeg") return ImageFormat::kJpeg;
  if (n == "webp") return ImageFormat::kWebp;
  throw Error("image format '" + name + "' is not png, jpg or webp");
}

bool image_format_of_path(const std::string& path, ImageFormat* format) {
  const size_t dot = path.find_last_of('.'), slash = path.find_last_of('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return false;
  const std::string ext = lower(path.substr(dot + 1));
  if (ext != "png" && ext != "jpg" && ext != "jpeg" && ext != "webp") return false;
  *format = parse_image_format(ext);
  return true;
}

const char* image_format_extension(ImageFormat format) {
  switch (format) {
    case ImageFormat::kPng: return "png";
    case ImageFormat::kJpeg: return "jpg";
    case ImageFormat::kWebp: return "webp";
  }
  return "png";
}

Image decode_image(const uint8_t* data, size_t size, const std::string& what, const ImageLimits& limits) {
  if (size == 0) throw Error(what + " is empty");
  int64_t declared_w = 0, declared_h = 0;
  // The header first: the size limits hold before a library parses the file.
  if (declared_size(data, size, &declared_w, &declared_h)) check_image_size(what, declared_w, declared_h, limits);
  Image image;
  if (is_png(data, size)) image = codec::decode_png(data, size, what, limits);
  else if (is_jpeg(data, size)) image = codec::decode_jpeg(data, size, what, limits);
  else if (is_webp(data, size)) image = codec::decode_webp(data, size, what, limits);
  else throw Error(what + " is not a PNG, JPEG or WebP image");
  return image;
}

Image read_image(const std::string& path, const ImageLimits& limits) {
  const MappedFile file(path);
  return decode_image(file.data(), file.size(), "'" + path + "'", limits);
}

std::vector<uint8_t> encode_image(const Image& image, const EncodeOptions& options) {
  const char* name = image_format_extension(options.format);
  check_layout(image, name);
  if (options.format == ImageFormat::kPng) return codec::encode_png(image);
  if (options.quality < 1 || options.quality > 100) throw Error(std::string(name) + ": quality " + std::to_string(options.quality) + " is not 1 to 100");
  if (options.format == ImageFormat::kWebp) return codec::encode_webp(image, options.quality);
  if (image.channels == 2 || image.channels == 4) {
    if (has_transparency(image)) throw Error("jpg: the picture has transparent pixels and JPEG has no alpha; write png or webp");
    return codec::encode_jpeg(colour_planes(image), options.quality);
  }
  return codec::encode_jpeg(image, options.quality);
}

void write_image(const std::string& path, const Image& image, const EncodeOptions& options) {
  std::vector<uint8_t> bytes;
  try {
    bytes = encode_image(image, options);
  } catch (const Error& e) {
    throw Error("'" + path + "': " + e.what());
  }
  write_file_atomically(path, bytes.data(), bytes.size());
}

void write_png(const std::string& path, const Image& image) { write_image(path, image, {}); }

}  // namespace edgegan
