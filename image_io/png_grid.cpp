// write_png_grid: generated images side by side in one PNG (what `edgegan generate` writes).
#include <algorithm>
#include <cmath>

#include "edgegan/image_io.h"

namespace edgegan {

void write_png_grid(const std::string& path, const Tensor& images, int columns, int scale, float vmin, float vmax) {
  if (images.shape.size() != 4 || images.layout != Layout::kNHWC || images.dtype != DType::kFloat32)
    throw Error("png: images must be an NHWC float tensor");
  const int64_t n = images.shape[0], h = images.shape[1], w = images.shape[2], c = images.shape[3];
  if (c != 1 && c != 3) throw Error("png: images must have 1 or 3 channels, not " + std::to_string(c));
  if (scale < 1 || scale > 64) throw Error("png: scale must be 1..64");
  if (columns <= 0) columns = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(n))));
  const int64_t rows = (n + columns - 1) / columns;
  const int64_t gap = 1;  // one-pixel separator lines
  const int64_t cell_h = h * scale, cell_w = w * scale;
  const int64_t out_h = rows * cell_h + (rows + 1) * gap, out_w = columns * cell_w + (columns + 1) * gap;
  if (out_h * out_w > (int64_t{1} << 28)) throw Error("png: the grid would be too large");
  if (std::isnan(vmin) || std::isnan(vmax) || vmax <= vmin) {
    const auto [lo, hi] = std::minmax_element(images.f32.begin(), images.f32.end());
    vmin = *lo;
    vmax = *hi > *lo ? *hi : *lo + 1.f;
  }
  Image grid;
  grid.width = out_w;
  grid.height = out_h;
  grid.channels = static_cast<int>(c);
  std::vector<uint8_t>& pixels = grid.pixels;
  pixels.assign(static_cast<size_t>(out_h * out_w * c), 64);  // dark grey separators
  for (int64_t i = 0; i < n; ++i) {
    const int64_t y0 = gap + (i / columns) * (cell_h + gap), x0 = gap + (i % columns) * (cell_w + gap);
    for (int64_t y = 0; y < cell_h; ++y)
      for (int64_t x = 0; x < cell_w; ++x)
        for (int64_t ch = 0; ch < c; ++ch) {
          const float v = images.f32[static_cast<size_t>(((i * h + y / scale) * w + x / scale) * c + ch)];
          const float u = std::clamp((v - vmin) / (vmax - vmin), 0.f, 1.f);
          pixels[static_cast<size_t>(((y0 + y) * out_w + x0 + x) * c + ch)] = static_cast<uint8_t>(std::lround(u * 255.f));
        }
  }
  write_png(path, grid);
}

}  // namespace edgegan
