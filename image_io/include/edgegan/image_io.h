// Picture files in and out, the codec library (libedgegan_image, linked beside
// libedgegan by the CLI, the Python module and whoever reads or writes pictures; the
// runtime itself needs no codec): PNG, JPEG and WebP decoding (libpng, libjpeg-turbo,
// libwebp) behind size limits checked on the header, encoding to the same three formats
// through the atomic writer, a grid of generated images as a PNG, and the memory
// report's chart.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "edgegan/edgegan.h"
#include "edgegan/image.h"
#include "edgegan/report.h"

namespace edgegan {

enum class ImageFormat { kPng, kJpeg, kWebp };

// "png", "jpg"/"jpeg", "webp" (any case). Throws Error naming the choices.
ImageFormat parse_image_format(const std::string& name);
// From a path's extension (.png, .jpg, .jpeg, .webp; any case); false when it is none of them.
bool image_format_of_path(const std::string& path, ImageFormat* format);
// "png", "jpg", "webp": the extension a folder run gives its outputs.
const char* image_format_extension(ImageFormat format);

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

// Tiles NHWC images [N, H, W, C] (C = 1 or 3) into one PNG, `columns` per row
// (0: a near-square grid), each pixel scaled up `scale` times, values mapped
// linearly from [value_min, value_max] to 0..255 (NaN range: the data's own range).
void write_png_grid(const std::string& path, const Tensor& images, int columns, int scale,
                    float value_min, float value_max);

// A per-layer bar chart of `report` (memory and traffic for each algorithm); .svg or .png
// by the path's extension. Atomic.
void write_report_chart(const MemoryReport& report, const std::string& path);

}  // namespace edgegan
