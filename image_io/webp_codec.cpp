// WebP through libwebp: plain C calls that return status codes (no callbacks, no
// longjmp). Decoding writes into our own buffer; the encoder's output is freed by a
// guard. WebP holds only RGB(A): grey pictures are widened before encoding.
#include <webp/decode.h>
#include <webp/encode.h>

#include <memory>

#include "edgegan/edgegan.h"
#include "image_io/image_codecs.h"

namespace edgegan::codec {
namespace {

std::string status_text(VP8StatusCode status) {
  switch (status) {
    case VP8_STATUS_OK: return "ok";
    case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
    case VP8_STATUS_INVALID_PARAM: return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR: return "bitstream error";
    case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature";
    case VP8_STATUS_SUSPENDED: return "suspended";
    case VP8_STATUS_USER_ABORT: return "aborted";
    case VP8_STATUS_NOT_ENOUGH_DATA: return "not enough data: truncated";
  }
  return "status " + std::to_string(static_cast<int>(status));
}

// Grey (+ alpha) widened to RGB(A); colour images as they are.
Image as_colour(const Image& image) {
  if (image.channels >= 3) return image;
  const bool alpha = image.channels == 2;
  Image out = blank_image(image.width, image.height, alpha ? 4 : 3);
  const size_t pixels = static_cast<size_t>(image.width) * static_cast<size_t>(image.height);
  for (size_t p = 0; p < pixels; ++p) {
    const uint8_t* src = &image.pixels[p * static_cast<size_t>(image.channels)];
    uint8_t* dst = &out.pixels[p * static_cast<size_t>(out.channels)];
    dst[0] = dst[1] = dst[2] = src[0];
    if (alpha) dst[3] = src[1];
  }
  return out;
}

struct WebPBytes {
  void operator()(uint8_t* p) const { WebPFree(p); }
};

}  // namespace

Image decode_webp(const uint8_t* data, size_t size, const std::string& what, const ImageLimits& limits) {
  WebPDecoderConfig config;
  if (!WebPInitDecoderConfig(&config)) throw Error(what + ": the WebP library does not match its headers");
  VP8StatusCode status = WebPGetFeatures(data, size, &config.input);
  if (status != VP8_STATUS_OK) throw Error(what + " is not a readable WebP (" + status_text(status) + ")");
  check_image_size(what, config.input.width, config.input.height, limits);
  if (config.input.has_animation) throw Error(what + " is an animated WebP; edgegan reads still pictures");
  const bool alpha = config.input.has_alpha != 0;
  Image image = blank_image(config.input.width, config.input.height, alpha ? 4 : 3);
  config.output.colorspace = alpha ? MODE_RGBA : MODE_RGB;
  config.output.is_external_memory = 1;  // decode straight into image.pixels
  config.output.u.RGBA.rgba = image.pixels.data();
  config.output.u.RGBA.stride = static_cast<int>(image.width) * image.channels;
  config.output.u.RGBA.size = image.pixels.size();
  status = WebPDecode(data, size, &config);
  WebPFreeDecBuffer(&config.output);  // nothing of ours: external memory; frees libwebp's own state, if any
  if (status != VP8_STATUS_OK) throw Error(what + ": the WebP data is damaged or truncated (" + status_text(status) + ")");
  return image;
}

std::vector<uint8_t> encode_webp(const Image& image, int quality) {
  if (image.width > WEBP_MAX_DIMENSION || image.height > WEBP_MAX_DIMENSION)
    throw Error("webp: " + std::to_string(image.width) + "x" + std::to_string(image.height) + " is larger than WebP holds (" +
                std::to_string(WEBP_MAX_DIMENSION) + " pixels per side); write PNG or JPEG");
  const Image colour = as_colour(image);
  const int w = static_cast<int>(colour.width), h = static_cast<int>(colour.height), stride = w * colour.channels;
  const bool alpha = colour.channels == 4;
  uint8_t* raw = nullptr;
  size_t bytes = 0;
  if (quality >= 100)
    bytes = alpha ? WebPEncodeLosslessRGBA(colour.pixels.data(), w, h, stride, &raw) : WebPEncodeLosslessRGB(colour.pixels.data(), w, h, stride, &raw);
  else
    bytes = alpha ? WebPEncodeRGBA(colour.pixels.data(), w, h, stride, static_cast<float>(quality), &raw)
                  : WebPEncodeRGB(colour.pixels.data(), w, h, stride, static_cast<float>(quality), &raw);
  const std::unique_ptr<uint8_t, WebPBytes> owned(raw);
  if (bytes == 0 || !raw) throw Error("webp: encoding failed");
  return {raw, raw + bytes};
}

}  // namespace edgegan::codec
