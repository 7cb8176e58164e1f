// The three codecs behind read_image/encode_image, one file each (png_codec.cpp,
// jpeg_codec.cpp, webp_codec.cpp). Each decoder is handed bytes whose signature
// image_files.cpp recognised; it checks the header's size against the limits before it
// allocates pixels and reports every library error as an Error starting with `what`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "edgegan/image.h"

namespace edgegan::codec {

Image decode_png(const uint8_t* data, size_t size, const std::string& what, const ImageLimits& limits);
Image decode_jpeg(const uint8_t* data, size_t size, const std::string& what, const ImageLimits& limits);
Image decode_webp(const uint8_t* data, size_t size, const std::string& what, const ImageLimits& limits);

// `image` has 1-4 channels and a consistent size (image_files.cpp checked).
std::vector<uint8_t> encode_png(const Image& image);
std::vector<uint8_t> encode_jpeg(const Image& image, int quality);  // 1 or 3 channels
std::vector<uint8_t> encode_webp(const Image& image, int quality);  // 100: lossless

}  // namespace edgegan::codec
