// Pictures in memory: the size check readers make on a header, and alpha planes
// split off and put back (what translate/upscale do around a model).
#include <algorithm>
#include <cstring>

#include "edgegan/edgegan.h"
#include "edgegan/image.h"

namespace edgegan {

Image blank_image(int64_t width, int64_t height, int channels) {
  Image image;
  image.width = width;
  image.height = height;
  image.channels = channels;
  image.pixels.resize(static_cast<size_t>(width) * static_cast<size_t>(height) * static_cast<size_t>(channels));
  return image;
}

void check_image_size(const std::string& what, int64_t width, int64_t height, const ImageLimits& limits) {
  if (width < 1 || height < 1) throw Error(what + " has no pixels (" + std::to_string(width) + "x" + std::to_string(height) + ")");
  if (width > limits.max_side || height > limits.max_side || width * height > limits.max_pixels)
    throw Error(what + " is " + std::to_string(width) + "x" + std::to_string(height) + " pixels, more than edgegan reads (at most " +
                std::to_string(limits.max_side) + " per side and " + std::to_string(limits.max_pixels) + " in all)");
}

Image colour_planes(const Image& image) {
  const int colour = image.channels >= 3 ? 3 : 1;
  if (colour == image.channels) return image;
  Image out = blank_image(image.width, image.height, colour);
  const size_t pixels = static_cast<size_t>(image.width) * static_cast<size_t>(image.height);
  for (size_t p = 0; p < pixels; ++p)
    std::memcpy(&out.pixels[p * static_cast<size_t>(colour)], &image.pixels[p * static_cast<size_t>(image.channels)], static_cast<size_t>(colour));
  return out;
}

Image alpha_plane(const Image& image) {
  Image out = blank_image(image.width, image.height, 1);
  if (image.channels != 2 && image.channels != 4) {
    std::fill(out.pixels.begin(), out.pixels.end(), uint8_t{255});
    return out;
  }
  for (size_t p = 0; p < out.pixels.size(); ++p) out.pixels[p] = image.pixels[p * static_cast<size_t>(image.channels) + static_cast<size_t>(image.channels - 1)];
  return out;
}

Image with_alpha(const Image& colour, const Image& alpha) {
  if ((colour.channels != 1 && colour.channels != 3) || alpha.channels != 1 || alpha.width != colour.width || alpha.height != colour.height)
    throw Error("with_alpha: a 1- or 3-channel image and a 1-channel alpha plane of the same size are needed");
  const int channels = colour.channels + 1;
  Image out = blank_image(colour.width, colour.height, channels);
  for (size_t p = 0; p < alpha.pixels.size(); ++p) {
    std::memcpy(&out.pixels[p * static_cast<size_t>(channels)], &colour.pixels[p * static_cast<size_t>(colour.channels)], static_cast<size_t>(colour.channels));
    out.pixels[p * static_cast<size_t>(channels) + static_cast<size_t>(colour.channels)] = alpha.pixels[p];
  }
  return out;
}

bool has_transparency(const Image& image) {
  if (image.channels != 2 && image.channels != 4) return false;
  for (size_t i = static_cast<size_t>(image.channels - 1); i < image.pixels.size(); i += static_cast<size_t>(image.channels))
    if (image.pixels[i] != 255) return true;
  return false;
}

}  // namespace edgegan
