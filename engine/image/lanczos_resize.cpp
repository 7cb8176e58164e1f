// resize_lanczos: Lanczos-3 resampling done separably. Each output coordinate gets
// its taps once (input indices clamped at the edges, weights normalised to sum 1),
// then rows are filtered into a float buffer and columns from it into bytes.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "edgegan/edgegan.h"
#include "edgegan/image.h"

namespace edgegan {
namespace {

constexpr double kLobes = 3.0;  // a = 3

double lanczos(double x) {
  x = std::fabs(x);
  if (x < 1e-12) return 1.0;
  if (x >= kLobes) return 0.0;
  const double px = std::numbers::pi * x;
  return kLobes * std::sin(px) * std::sin(px / kLobes) / (px * px);
}

// The taps of one axis: output i reads input[index[i * width + k]] * weight[...], k < width.
struct Taps {
  int64_t width = 0;
  std::vector<int64_t> index;
  std::vector<float> weight;
};

Taps axis_taps(int64_t in, int64_t out) {
  const double scale = static_cast<double>(out) / static_cast<double>(in);
  // Shrinking stretches the kernel over 1/scale input pixels, so it low-passes
  // instead of aliasing; enlarging interpolates with the kernel as it is.
  const double stretch = std::max(1.0, 1.0 / scale), support = kLobes * stretch;
  Taps t;
  t.width = static_cast<int64_t>(std::ceil(support)) * 2 + 1;
  t.index.resize(static_cast<size_t>(out * t.width));
  t.weight.resize(static_cast<size_t>(out * t.width));
  for (int64_t i = 0; i < out; ++i) {
    const double centre = (static_cast<double>(i) + 0.5) / scale - 0.5;  // pixel centres aligned
    const int64_t first = static_cast<int64_t>(std::floor(centre)) - t.width / 2;
    std::vector<double> w(static_cast<size_t>(t.width));
    double sum = 0;
    for (int64_t k = 0; k < t.width; ++k) {
      w[static_cast<size_t>(k)] = lanczos((static_cast<double>(first + k) - centre) / stretch);
      sum += w[static_cast<size_t>(k)];
    }
    for (int64_t k = 0; k < t.width; ++k) {
      const size_t at = static_cast<size_t>(i * t.width + k);
      t.index[at] = std::clamp<int64_t>(first + k, 0, in - 1);  // edges repeat the border pixel
      t.weight[at] = static_cast<float>(w[static_cast<size_t>(k)] / sum);
    }
  }
  return t;
}

}  // namespace

Image resize_lanczos(const Image& image, int64_t width, int64_t height) {
  if (image.channels < 1 || image.channels > 4 || image.width < 1 || image.height < 1 ||
      image.pixels.size() != static_cast<size_t>(image.width * image.height * image.channels))
    throw Error("resize: the image's size and its pixels disagree");
  if (width < 1 || height < 1 || width > (int64_t{1} << 20) || height > (int64_t{1} << 20) || width * height > (int64_t{1} << 30))
    throw Error("resize: cannot resize to " + std::to_string(width) + "x" + std::to_string(height));
  if (width == image.width && height == image.height) return image;
  const int64_t c = image.channels;
  const Taps across = axis_taps(image.width, width), down = axis_taps(image.height, height);
  // Rows: every input row filtered to the new width, in float.
  std::vector<float> rows(static_cast<size_t>(image.height * width * c));
  for (int64_t y = 0; y < image.height; ++y) {
    const uint8_t* src = &image.pixels[static_cast<size_t>(y * image.width * c)];
    float* dst = &rows[static_cast<size_t>(y * width * c)];
    for (int64_t x = 0; x < width; ++x)
      for (int64_t ch = 0; ch < c; ++ch) {
        float sum = 0;
        for (int64_t k = 0; k < across.width; ++k) {
          const size_t at = static_cast<size_t>(x * across.width + k);
          sum += across.weight[at] * static_cast<float>(src[across.index[at] * c + ch]);
        }
        dst[x * c + ch] = sum;
      }
  }
  // Columns: from the filtered rows to bytes, rounded and clamped (Lanczos overshoots).
  Image out = blank_image(width, height, image.channels);
  for (int64_t y = 0; y < height; ++y)
    for (int64_t x = 0; x < width * c; ++x) {
      float sum = 0;
      for (int64_t k = 0; k < down.width; ++k) {
        const size_t at = static_cast<size_t>(y * down.width + k);
        sum += down.weight[at] * rows[static_cast<size_t>(down.index[at] * width * c + x)];
      }
      out.pixels[static_cast<size_t>(y * width * c + x)] = static_cast<uint8_t>(std::clamp(std::lround(sum), 0L, 255L));
    }
  return out;
}

}  // namespace edgegan
