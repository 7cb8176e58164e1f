// PNG/JPEG decoding (stb_image) behind size limits checked on the header, and PNG
// encoding (stb_image_write) through the atomic writer.
#include <stb/stb_image.h>
#include <stb/stb_image_write.h>

#include <climits>
#include <cstring>
#include <memory>

#include "edgegan/edgegan.h"
#include "edgegan/image.h"
#include "edgegan/io.h"
#include "engine/mapped_file.h"

namespace edgegan {
namespace {

using StbPixels = std::unique_ptr<stbi_uc, void (*)(void*)>;

std::string size_text(int64_t w, int64_t h) { return std::to_string(w) + "x" + std::to_string(h); }

uint32_t be16(const uint8_t* p) { return uint32_t{p[0]} << 8 | p[1]; }
uint32_t be32(const uint8_t* p) { return be16(p) << 16 | be16(p + 2); }

// The size a PNG or JPEG header declares, read here so that the limits are checked
// (and named) before stb_image, which refuses what it cannot allocate with a vaguer
// message. false: no header found (stb_image then says what is wrong).
bool declared_size(const uint8_t* d, size_t n, int64_t* w, int64_t* h) {
  static const uint8_t kPng[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (n >= 24 && std::memcmp(d, kPng, 8) == 0 && std::memcmp(d + 12, "IHDR", 4) == 0) {
    *w = be32(d + 16);
    *h = be32(d + 20);
    return true;
  }
  if (n < 4 || d[0] != 0xFF || d[1] != 0xD8) return false;
  for (size_t i = 2; i + 9 < n;) {  // JPEG: walk the marker segments to the frame header (SOFn)
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

}  // namespace

Image decode_image(const uint8_t* data, size_t size, int channels, const std::string& what, const ImageLimits& limits) {
  if (channels != 1 && channels != 3) throw Error(what + ": images are read as 1 or 3 channels, not " + std::to_string(channels));
  if (size == 0) throw Error(what + " is empty");
  if (size > static_cast<size_t>(INT_MAX)) throw Error(what + " is larger than 2 GiB; not an image edgegan reads");
  const int length = static_cast<int>(size);
  int64_t declared_w = 0, declared_h = 0;
  // The header first: the size limits hold before a single pixel is allocated.
  if (declared_size(data, size, &declared_w, &declared_h) &&
      (declared_w > limits.max_side || declared_h > limits.max_side || declared_w * declared_h > limits.max_pixels))
    throw Error(what + " is " + size_text(declared_w, declared_h) + " pixels, more than edgegan reads (at most " +
                std::to_string(limits.max_side) + " per side and " + std::to_string(limits.max_pixels) + " in all)");
  int w = 0, h = 0, file_channels = 0;
  if (!stbi_info_from_memory(data, length, &w, &h, &file_channels))
    throw Error(what + " is not a PNG or JPEG image (" + stbi_failure_reason() + ")");
  if (w < 1 || h < 1) throw Error(what + " has no pixels");
  if (w > limits.max_side || h > limits.max_side || int64_t{w} * h > limits.max_pixels)
    throw Error(what + " is " + size_text(w, h) + " pixels, more than edgegan reads (at most " + std::to_string(limits.max_side) +
                " per side and " + std::to_string(limits.max_pixels) + " in all)");
  if (channels == 1 && file_channels >= 3) throw Error(what + " is a colour image; the model takes grey images");
  const bool has_alpha = file_channels == 2 || file_channels == 4;
  // Decode with the file's own channels (alpha included, to check it), then drop or copy.
  const int decode_channels = has_alpha ? file_channels : channels;
  int dw = 0, dh = 0, dc = 0;
  StbPixels decoded(stbi_load_from_memory(data, length, &dw, &dh, &dc, decode_channels), &stbi_image_free);
  if (!decoded) throw Error(what + ": the image data is damaged or truncated (" + stbi_failure_reason() + ")");
  if (dw != w || dh != h) throw Error(what + ": the image's size changed while decoding");
  Image image;
  image.width = w;
  image.height = h;
  image.channels = channels;
  const size_t pixels = static_cast<size_t>(w) * static_cast<size_t>(h);
  image.pixels.resize(pixels * static_cast<size_t>(channels));
  if (!has_alpha) {
    std::memcpy(image.pixels.data(), decoded.get(), image.pixels.size());
    return image;
  }
  const int colour = decode_channels - 1;  // 1 (grey + alpha) or 3 (RGB + alpha)
  for (size_t p = 0; p < pixels; ++p) {
    const stbi_uc* src = decoded.get() + p * static_cast<size_t>(decode_channels);
    if (src[colour] != 255)
      throw Error(what + " has transparent pixels (alpha " + std::to_string(src[colour]) + " at x " + std::to_string(p % static_cast<size_t>(w)) +
                  ", y " + std::to_string(p / static_cast<size_t>(w)) + "); flatten it onto a background first");
    for (int c = 0; c < channels; ++c) image.pixels[p * static_cast<size_t>(channels) + static_cast<size_t>(c)] = src[colour == 1 ? 0 : c];
  }
  return image;
}

Image read_image(const std::string& path, int channels, const ImageLimits& limits) {
  const MappedFile file(path);
  return decode_image(file.data(), file.size(), channels, "'" + path + "'", limits);
}

void write_png(const std::string& path, const Image& image) {
  if (image.channels != 1 && image.channels != 3) throw Error("png: images have 1 or 3 channels, not " + std::to_string(image.channels));
  if (image.width < 1 || image.height < 1 || image.width > INT_MAX / 4 || image.height > INT_MAX / 4 ||
      image.pixels.size() != static_cast<size_t>(image.width * image.height * image.channels))
    throw Error("png: the image's size and its pixels disagree");
  std::vector<uint8_t> png;
  auto append = [](void* context, void* data, int size) {
    auto* out = static_cast<std::vector<uint8_t>*>(context);
    out->insert(out->end(), static_cast<uint8_t*>(data), static_cast<uint8_t*>(data) + size);
  };
  if (!stbi_write_png_to_func(append, &png, static_cast<int>(image.width), static_cast<int>(image.height), image.channels, image.pixels.data(),
                              static_cast<int>(image.width * image.channels)))
    throw Error("png: encoding '" + path + "' failed");
  write_file_atomically(path, png.data(), png.size());
}

}  // namespace edgegan
