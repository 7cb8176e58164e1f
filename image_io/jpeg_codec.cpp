// JPEG through libjpeg-turbo's TurboJPEG API: it runs libjpeg's error-exit callback
// and setjmp inside each call and returns -1 with a message instead, so no longjmp
// crosses C++ frames here. Handles are destroyed by a guard on every path.
#include <turbojpeg.h>

#include <climits>
#include <memory>

#include "edgegan/edgegan.h"
#include "image_io/image_codecs.h"

namespace edgegan::codec {
namespace {

struct TjDestroy {
  void operator()(void* handle) const { tjDestroy(handle); }
};
using TjHandle = std::unique_ptr<void, TjDestroy>;

std::string tj_message(void* handle) { return tjGetErrorStr2(handle); }

}  // namespace

Image decode_jpeg(const uint8_t* data, size_t size, const std::string& what, const ImageLimits& limits) {
  const TjHandle tj(tjInitDecompress());
  if (!tj) throw Error(what + ": cannot start the JPEG decoder (" + tj_message(nullptr) + ")");
  if (size > ULONG_MAX) throw Error(what + " is too large for the JPEG decoder");
  int width = 0, height = 0, subsampling = 0, colourspace = 0;
  if (tjDecompressHeader3(tj.get(), data, static_cast<unsigned long>(size), &width, &height, &subsampling, &colourspace) != 0)
    throw Error(what + " is not a readable JPEG (" + tj_message(tj.get()) + ")");
  check_image_size(what, width, height, limits);
  if (colourspace == TJCS_CMYK || colourspace == TJCS_YCCK) throw Error(what + " is a CMYK JPEG; edgegan reads grey and colour (RGB/YCbCr) JPEGs");
  const bool grey = colourspace == TJCS_GRAY;
  Image image = blank_image(width, height, grey ? 1 : 3);
  // A warning (corrupt data, a premature end that libjpeg would fill with grey) stops
  // the decode: a damaged picture is refused, not upscaled with its hole. LIMITSCANS
  // refuses progressive files with hundreds of scans (minutes of decoding for a few KB).
  const int flags = TJFLAG_ACCURATEDCT | TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS;
  if (tjDecompress2(tj.get(), data, static_cast<unsigned long>(size), image.pixels.data(), width, 0, height, grey ? TJPF_GRAY : TJPF_RGB, flags) != 0)
    throw Error(what + ": the JPEG data is damaged or truncated (" + tj_message(tj.get()) + ")");
  return image;
}

std::vector<uint8_t> encode_jpeg(const Image& image, int quality) {
  if (image.width > INT_MAX / 4 || image.height > INT_MAX) throw Error("jpeg: the image is too large to encode");
  const TjHandle tj(tjInitCompress());
  if (!tj) throw Error("jpeg: cannot start the encoder (" + tj_message(nullptr) + ")");
  const int width = static_cast<int>(image.width), height = static_cast<int>(image.height);
  const bool grey = image.channels == 1;
  // Chroma at full resolution from quality 90 up (what a high quality asks for), halved
  // both ways below (the usual trade for size).
  const int subsampling = grey ? TJSAMP_GRAY : quality >= 90 ? TJSAMP_444 : TJSAMP_420;
  const unsigned long capacity = tjBufSize(width, height, subsampling);
  if (capacity == static_cast<unsigned long>(-1)) throw Error("jpeg: the image is too large to encode");
  std::vector<uint8_t> out(capacity);
  unsigned char* buffer = out.data();
  unsigned long bytes = capacity;
  // NOREALLOC: TurboJPEG writes into our buffer, sized for the worst case, and never frees it.
  if (tjCompress2(tj.get(), image.pixels.data(), width, 0, height, grey ? TJPF_GRAY : TJPF_RGB, &buffer, &bytes, subsampling, quality,
                  TJFLAG_ACCURATEDCT | TJFLAG_NOREALLOC) != 0)
    throw Error("jpeg: encoding failed (" + tj_message(tj.get()) + ")");
  out.resize(bytes);
  return out;
}

}  // namespace edgegan::codec
