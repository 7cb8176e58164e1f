// The picture codecs (PNG, JPEG, WebP) behind read_image/write_image: round trips
// (PNG and lossless WebP bit-exact, JPEG and lossy WebP above a stated PSNR), channel
// layouts, and refusals of truncated, corrupt and hostile files, all generated here.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>

#include "edgegan/edgegan.h"
#include "edgegan/image.h"
#include "edgegan/image_io.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

namespace fs = std::filesystem;

// Smooth waves plus a little noise: photo-like content for the lossy codecs' PSNR.
Image test_image(int64_t width, int64_t height, int channels, uint32_t seed) {
  std::mt19937 rng(seed);
  Image im;
  im.width = width;
  im.height = height;
  im.channels = channels;
  im.pixels.resize(static_cast<size_t>(width * height * channels));
  for (int64_t y = 0; y < height; ++y)
    for (int64_t x = 0; x < width; ++x)
      for (int c = 0; c < channels; ++c) {
        const double wave = 60.0 * std::sin(0.25 * static_cast<double>(x) + c) * std::cos(0.18 * static_cast<double>(y) - c);
        im.pixels[static_cast<size_t>((y * width + x) * channels + c)] = static_cast<uint8_t>(125 + std::lround(wave) + testing::uniform_int(rng, 0, 3));
      }
  return im;
}

double psnr(const Image& a, const Image& b) {
  EXPECT_EQ(a.pixels.size(), b.pixels.size());
  double sum = 0;
  for (size_t i = 0; i < a.pixels.size(); ++i) {
    const double d = static_cast<double>(a.pixels[i]) - static_cast<double>(b.pixels[i]);
    sum += d * d;
  }
  const double mse = sum / static_cast<double>(a.pixels.size());
  return mse == 0 ? 99.0 : 10.0 * std::log10(255.0 * 255.0 / mse);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

Image decode(const std::vector<uint8_t>& bytes, const ImageLimits& limits = {}) { return decode_image(bytes.data(), bytes.size(), "'test'", limits); }

std::vector<uint8_t> encode(const Image& im, ImageFormat format, int quality = 95) { return encode_image(im, {format, quality}); }

TEST(ImageCodecs, PngRoundTripsEveryLayoutBitExact) {
  for (int channels = 1; channels <= 4; ++channels) {
    const Image im = test_image(23, 11, channels, static_cast<uint32_t>(channels));
    const Image back = decode(encode(im, ImageFormat::kPng));
    EXPECT_EQ(back.width, 23);
    EXPECT_EQ(back.height, 11);
    EXPECT_EQ(back.channels, channels);
    EXPECT_EQ(back.pixels, im.pixels) << channels << " channels";
  }
}

// JPEG at quality 95 (4:4:4) and 75 (4:2:0): at least 40 and 33 dB on this content
// (measured 43.6 and 36.0 dB for RGB, more for grey, with libjpeg-turbo 2.1.5).
TEST(ImageCodecs, JpegRoundTripsWithinAPsnr) {
  for (int channels : {1, 3}) {
    const Image im = test_image(40, 24, channels, 11);
    const Image q95 = decode(encode(im, ImageFormat::kJpeg, 95)), q75 = decode(encode(im, ImageFormat::kJpeg, 75));
    EXPECT_EQ(q95.channels, channels);
    EXPECT_GE(psnr(q95, im), 40.0) << channels;
    EXPECT_GE(psnr(q75, im), 33.0) << channels;
    EXPECT_LT(encode(im, ImageFormat::kJpeg, 75).size(), encode(im, ImageFormat::kJpeg, 95).size());
  }
  // JPEG holds no alpha: an opaque plane is dropped, a transparent pixel is refused.
  Image rgba = with_alpha(test_image(8, 8, 3, 12), test_image(8, 8, 1, 13));
  EXPECT_NE(error_of([&] { encode(rgba, ImageFormat::kJpeg); }).find("JPEG has no alpha"), std::string::npos);
  std::fill(rgba.pixels.begin(), rgba.pixels.end(), uint8_t{255});
  EXPECT_EQ(decode(encode(rgba, ImageFormat::kJpeg)).channels, 3);
}

// WebP: lossy at quality 90 above 35 dB (measured 38.0 with libwebp 1.2.4); quality 100 is lossless (bit-exact, alpha too;
// the alpha values here are never 0, where a lossless encoder may change the colour).
TEST(ImageCodecs, WebpRoundTripsLossyAndLossless) {
  const Image rgb = test_image(33, 17, 3, 21);
  const Image lossy = decode(encode(rgb, ImageFormat::kWebp, 90));
  EXPECT_EQ(lossy.channels, 3);
  EXPECT_GE(psnr(lossy, rgb), 35.0);
  EXPECT_EQ(decode(encode(rgb, ImageFormat::kWebp, 100)).pixels, rgb.pixels);
  const Image rgba = with_alpha(rgb, test_image(33, 17, 1, 22));
  const Image back = decode(encode(rgba, ImageFormat::kWebp, 100));
  EXPECT_EQ(back.channels, 4);
  EXPECT_EQ(back.pixels, rgba.pixels);
  // Grey is stored as RGB.
  const Image grey = test_image(9, 5, 1, 23);
  const Image widened = decode(encode(grey, ImageFormat::kWebp, 100));
  ASSERT_EQ(widened.channels, 3);
  for (size_t p = 0; p < grey.pixels.size(); ++p) EXPECT_EQ(widened.pixels[p * 3 + 1], grey.pixels[p]);
}

TEST(ImageCodecs, FormatNames) {
  ImageFormat f = ImageFormat::kPng;
  EXPECT_TRUE(image_format_of_path("a/b.JPEG", &f));
  EXPECT_EQ(f, ImageFormat::kJpeg);
  EXPECT_TRUE(image_format_of_path("x.webp", &f));
  EXPECT_EQ(f, ImageFormat::kWebp);
  EXPECT_FALSE(image_format_of_path("x.gif", &f));
  EXPECT_FALSE(image_format_of_path("dir.png/x", &f));
  EXPECT_EQ(parse_image_format("JPG"), ImageFormat::kJpeg);
  EXPECT_NE(error_of([] { parse_image_format("bmp"); }).find("'bmp' is not png, jpg or webp"), std::string::npos);
  EXPECT_NE(error_of([] { encode_image(test_image(2, 2, 3, 1), {ImageFormat::kJpeg, 0}); }).find("quality 0 is not 1 to 100"), std::string::npos);
}

// Files written by Pillow (tests/data/images/README.md), read with their own channels.
TEST(ImageCodecs, ReadsFilesFromAnotherEncoder) {
  const fs::path dir = testing::source_dir() / "tests" / "data" / "images";
  const Image png = read_image((dir / "rgb.png").string());
  const Image jpg = read_image((dir / "photo.jpg").string());
  EXPECT_EQ(png.channels, 3);
  EXPECT_EQ(jpg.width, 41);
  EXPECT_EQ(jpg.height, 30);
  EXPECT_GE(psnr(jpg, png), 25.0) << "the JPEG is a lossy copy of the PNG";
  const Image rgba = read_image((dir / "opaque_rgba.png").string());
  EXPECT_EQ(rgba.channels, 4);
  EXPECT_EQ(colour_planes(rgba).pixels, png.pixels);
  EXPECT_FALSE(has_transparency(rgba));
  const Image grey_alpha = read_image((dir / "opaque_grey_alpha.png").string());
  EXPECT_EQ(grey_alpha.channels, 2);
  for (size_t p = 0; p < 41 * 30; ++p) EXPECT_EQ(grey_alpha.pixels[p * 2], png.pixels[p * 3]);
  const Image transparent = read_image((dir / "transparent_rgba.png").string());
  EXPECT_EQ(alpha_plane(transparent).pixels[3 * 41 + 4], 10);
  EXPECT_TRUE(has_transparency(transparent));
}

// Every prefix of a valid file either is refused with an Error or decodes to exactly
// the whole file's pixels: a cut file never becomes a silently different picture.
TEST(ImageCodecs, EveryTruncationIsRefusedOrComplete) {
  const Image im = test_image(19, 13, 3, 31);
  for (ImageFormat format : {ImageFormat::kPng, ImageFormat::kJpeg, ImageFormat::kWebp}) {
    const std::vector<uint8_t> bytes = encode(im, format, 90);
    const std::vector<uint8_t> whole = decode(bytes).pixels;
    int refused = 0;
    for (size_t n = 1; n < bytes.size(); ++n) {
      try {
        EXPECT_EQ(decode_image(bytes.data(), n, "'cut'").pixels, whole) << image_format_extension(format) << " cut at " << n;
      } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()).rfind("'cut'", 0), 0u) << e.what();
        ++refused;
      }
    }
    EXPECT_GE(refused, static_cast<int>(bytes.size()) - 16) << image_format_extension(format);
  }
  const std::vector<uint8_t> png = encode(im, ImageFormat::kPng);
  const std::string e = error_of([&] { decode_image(png.data(), png.size() / 2, "'cut.png'"); });
  EXPECT_NE(e.find("'cut.png': the PNG data is damaged or truncated"), std::string::npos) << e;
  const std::vector<uint8_t> jpg = encode(im, ImageFormat::kJpeg);
  EXPECT_NE(error_of([&] { decode_image(jpg.data(), jpg.size() - 40, "'cut.jpg'"); }).find("'cut.jpg': the JPEG data is damaged or truncated"),
            std::string::npos);
  const std::vector<uint8_t> webp = encode(im, ImageFormat::kWebp);
  EXPECT_NE(error_of([&] { decode_image(webp.data(), webp.size() / 2, "'cut.webp'"); }).find("'cut.webp'"), std::string::npos);
}

// Flipped bytes anywhere: an Error or some picture of the declared size, never a crash
// (the sanitizer builds run this too).
TEST(ImageCodecs, CorruptBytesAreHandled) {
  std::mt19937 rng(41);
  for (ImageFormat format : {ImageFormat::kPng, ImageFormat::kJpeg, ImageFormat::kWebp}) {
    const std::vector<uint8_t> bytes = encode(test_image(16, 12, 3, 42), format, 80);
    for (int trial = 0; trial < 300; ++trial) {
      std::vector<uint8_t> bad = bytes;
      for (int k = 0; k < 3; ++k) bad[static_cast<size_t>(testing::uniform_int(rng, 0, static_cast<int>(bad.size()) - 1))] ^= static_cast<uint8_t>(1 + testing::uniform_int(rng, 0, 254));
      try {
        const Image im = decode(bad);
        EXPECT_EQ(im.pixels.size(), static_cast<size_t>(im.width * im.height * im.channels));
      } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line";
      }
    }
  }
}

// Headers that claim huge pictures are refused before pixels are allocated, for each format.
TEST(ImageCodecs, RefusesHugeDimensionsFromTheHeader) {
  const uint8_t png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R',
                         0, 1, 0x86, 0xa0,  // width 100000
                         0, 1, 0x86, 0xa0,  // height 100000
                         8, 2, 0, 0, 0, 0, 0, 0, 0};
  std::string e = error_of([&] { decode_image(png, sizeof png, "'huge.png'"); });
  EXPECT_NE(e.find("'huge.png' is 100000x100000 pixels, more than edgegan reads"), std::string::npos) << e;
  // A JPEG whose frame header says 60000x60000 (the rest of the file is missing).
  const uint8_t jpg[] = {0xFF, 0xD8, 0xFF, 0xC0, 0, 11, 8, 0xEA, 0x60, 0xEA, 0x60, 1, 1, 0x11, 0};
  e = error_of([&] { decode_image(jpg, sizeof jpg, "'huge.jpg'"); });
  EXPECT_NE(e.find("'huge.jpg' is 60000x60000 pixels"), std::string::npos) << e;
  // Real files over smaller limits: the WebP's size comes from libwebp's header read.
  ImageLimits small;
  small.max_side = 8;
  const Image wide = test_image(9, 3, 3, 4);
  for (ImageFormat format : {ImageFormat::kPng, ImageFormat::kJpeg, ImageFormat::kWebp}) {
    e = error_of([&] { decode(encode(wide, format), small); });
    EXPECT_NE(e.find("9x3 pixels, more than edgegan reads"), std::string::npos) << e;
  }
  const std::string text = "certainly not a picture";
  e = error_of([&] { decode_image(reinterpret_cast<const uint8_t*>(text.data()), text.size(), "'notes.png'"); });
  EXPECT_NE(e.find("'notes.png' is not a PNG, JPEG or WebP image"), std::string::npos) << e;
  EXPECT_NE(error_of([&] { decode_image(png, 0, "'empty.png'"); }).find("is empty"), std::string::npos);
  EXPECT_NE(error_of([] { read_image("/nonexistent/missing.png"); }).find("missing.png"), std::string::npos);
}

// write_image is atomic: a refused encode leaves no file, and a good one replaces the old.
TEST(ImageCodecs, WriteImageLeavesNothingOnError) {
  const fs::path dir = fs::temp_directory_path() / ("edgegan_codec_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const Image rgba = with_alpha(test_image(6, 5, 3, 51), test_image(6, 5, 1, 52));
  const std::string jpg = (dir / "x.jpg").string();
  EXPECT_NE(error_of([&] { write_image(jpg, rgba, {ImageFormat::kJpeg, 90}); }).find("x.jpg'"), std::string::npos);
  EXPECT_FALSE(fs::exists(jpg));
  write_image((dir / "x.webp").string(), rgba, {ImageFormat::kWebp, 100});
  EXPECT_EQ(read_image((dir / "x.webp").string()).pixels, rgba.pixels);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace edgegan
