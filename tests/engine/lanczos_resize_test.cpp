// resize_lanczos against a float64 reference written here the direct way: every
// output pixel as the 2-D sum over input pixels of the product of the two 1-D Lanczos
// weights (each axis normalised), edges clamped. The engine's separable float version
// must land within one level of it (rounding of a float sum near .5).
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>

#include "edgegan/edgegan.h"
#include "edgegan/image.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

double lanczos3(double x) {
  if (x == 0) return 1;
  if (std::fabs(x) >= 3) return 0;
  const double p = std::numbers::pi * x;
  return 3 * std::sin(p) * std::sin(p / 3) / (p * p);
}

// The weight of every input index for output coordinate i along one axis (in -> out).
std::vector<double> weights_1d(int64_t i, int64_t in, int64_t out) {
  const double scale = double(out) / double(in), stretch = std::max(1.0, 1.0 / scale);
  const double centre = (double(i) + 0.5) / scale - 0.5;
  std::vector<double> w(static_cast<size_t>(in), 0.0);
  double sum = 0;
  // Taps at every integer position within the stretched support; off-image positions
  // fold onto the nearest edge pixel.
  for (int64_t t = static_cast<int64_t>(std::floor(centre - 3 * stretch)); t <= static_cast<int64_t>(std::ceil(centre + 3 * stretch)); ++t) {
    const double v = lanczos3((double(t) - centre) / stretch);
    w[static_cast<size_t>(std::clamp<int64_t>(t, 0, in - 1))] += v;
    sum += v;
  }
  for (double& v : w) v /= sum;
  return w;
}

Image reference(const Image& im, int64_t width, int64_t height) {
  Image out;
  out.width = width;
  out.height = height;
  out.channels = im.channels;
  out.pixels.resize(static_cast<size_t>(width * height * im.channels));
  for (int64_t y = 0; y < height; ++y) {
    const std::vector<double> wy = weights_1d(y, im.height, height);
    for (int64_t x = 0; x < width; ++x) {
      const std::vector<double> wx = weights_1d(x, im.width, width);
      for (int c = 0; c < im.channels; ++c) {
        double sum = 0;
        for (int64_t sy = 0; sy < im.height; ++sy)
          for (int64_t sx = 0; sx < im.width; ++sx)
            sum += wy[static_cast<size_t>(sy)] * wx[static_cast<size_t>(sx)] * im.pixels[static_cast<size_t>((sy * im.width + sx) * im.channels + c)];
        out.pixels[static_cast<size_t>((y * width + x) * im.channels + c)] = static_cast<uint8_t>(std::clamp(std::lround(sum), 0L, 255L));
      }
    }
  }
  return out;
}

Image noise(int64_t width, int64_t height, int channels, uint32_t seed) {
  std::mt19937 rng(seed);
  Image im;
  im.width = width;
  im.height = height;
  im.channels = channels;
  for (int64_t i = 0; i < width * height * channels; ++i) im.pixels.push_back(static_cast<uint8_t>(testing::uniform_int(rng, 0, 255)));
  return im;
}

// Noise with hard edges (0 and 255 neighbours): overshoot, clamping and the edges all matter.
TEST(LanczosResize, MatchesAFloat64ReferenceWithinOneLevel) {
  const struct { int64_t w, h, to_w, to_h; int channels; } cases[] = {
      {7, 5, 14, 10, 3},   // x2
      {9, 6, 13, 17, 1},   // uneven enlargement
      {16, 12, 8, 6, 4},   // halving: the kernel widens
      {20, 9, 7, 4, 2},    // uneven shrink
      {5, 5, 37, 3, 3},    // one axis up, the other down
      {1, 1, 3, 2, 1},     // a single pixel
  };
  for (const auto& c : cases) {
    const Image in = noise(c.w, c.h, c.channels, static_cast<uint32_t>(c.w * 31 + c.to_w));
    const Image got = resize_lanczos(in, c.to_w, c.to_h), want = reference(in, c.to_w, c.to_h);
    ASSERT_EQ(got.width, c.to_w);
    ASSERT_EQ(got.height, c.to_h);
    ASSERT_EQ(got.channels, c.channels);
    int worst = 0;
    for (size_t i = 0; i < got.pixels.size(); ++i) worst = std::max(worst, std::abs(int{got.pixels[i]} - int{want.pixels[i]}));
    EXPECT_LE(worst, 1) << c.w << "x" << c.h << " -> " << c.to_w << "x" << c.to_h;
  }
}

TEST(LanczosResize, KeepsConstantsAndTheSameSize) {
  Image flat = noise(6, 4, 3, 1);
  std::fill(flat.pixels.begin(), flat.pixels.end(), uint8_t{173});
  for (uint8_t v : resize_lanczos(flat, 17, 9).pixels) ASSERT_EQ(v, 173);
  for (uint8_t v : resize_lanczos(flat, 2, 3).pixels) ASSERT_EQ(v, 173);
  const Image im = noise(8, 5, 2, 2);
  EXPECT_EQ(resize_lanczos(im, 8, 5).pixels, im.pixels);
  EXPECT_THROW(resize_lanczos(im, 0, 5), Error);
  Image broken = im;
  broken.pixels.pop_back();
  EXPECT_THROW(resize_lanczos(broken, 4, 4), Error);
}

}  // namespace
}  // namespace edgegan
