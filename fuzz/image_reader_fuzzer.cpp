// libFuzzer target: picture bytes from outside -> edgegan::decode_image (PNG, JPEG,
// WebP through libpng, libjpeg-turbo, libwebp). A decoded picture must be consistent,
// and small ones go once more through the PNG encoder and back, which must be exact.
#include <cstdint>
#include <cstdlib>

#include "edgegan/edgegan.h"
#include "edgegan/image_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Smaller limits than a real run's keep each input's work (and memory) small.
  edgegan::ImageLimits limits;
  limits.max_side = 4096;
  limits.max_pixels = int64_t{1} << 20;
  edgegan::Image image;
  try {
    image = edgegan::decode_image(data, size, "'fuzz'", limits);
  } catch (const edgegan::Error&) {
    return 0;
  }
  if (image.channels < 1 || image.channels > 4 || image.pixels.size() != static_cast<size_t>(image.width * image.height * image.channels)) std::abort();
  if (image.width * image.height <= 4096) {
    const std::vector<uint8_t> png = edgegan::encode_image(image, {});
    if (edgegan::decode_image(png.data(), png.size(), "'png'").pixels != image.pixels) std::abort();
  }
  return 0;
}
