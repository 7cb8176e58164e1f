#include "kernels_cpu/grid_sample/grid_sample.h"

#include <cmath>

namespace edgegan::cpu {
namespace {

// Up to 4 taps along one axis: the pixel indices (-1: outside, reads 0) and weights.
struct AxisTaps {
  int count = 0;
  int64_t index[4] = {-1, -1, -1, -1};
  float weight[4] = {0.f, 0.f, 0.f, 0.f};
};

// A padded float index as a pixel index, -1 when outside the map.
inline int64_t pixel_index(float c, int64_t size) { return c >= 0.f && c <= static_cast<float>(size - 1) ? static_cast<int64_t>(c) : -1; }

// The taps of coordinate `c` (unpadded) along an axis of `size` pixels.
AxisTaps axis_taps(const GridSampleShape& s, float c, int64_t size) {
  AxisTaps t;
  if (s.mode == GridSampleMode::kBicubic) {
    t.count = 4;
    const float base = std::floor(c);
    grid_sample_cubic_weights(c - base, t.weight);
    for (int k = 0; k < 4; ++k) {
      t.index[k] = pixel_index(grid_sample_pad(base - 1.f + static_cast<float>(k), size, s.padding, s.align_corners), size);
    }
    return t;
  }
  c = grid_sample_pad(c, size, s.padding, s.align_corners);
  if (s.mode == GridSampleMode::kNearest) {
    t.count = 1;
    t.weight[0] = 1.f;
    if (grid_sample_near(c, size)) t.index[0] = pixel_index(std::nearbyint(c), size);
    return t;
  }
  t.count = 2;
  if (!grid_sample_near(c, size)) return t;
  const float base = std::floor(c), f = c - base;
  t.weight[0] = 1.f - f;
  t.weight[1] = f;
  t.index[0] = pixel_index(base, size);
  t.index[1] = pixel_index(base + 1.f, size);
  return t;
}

// The taps of output pixel (n, oh, ow) for group g.
inline void point_taps(const GridSampleShape& s, const float* grid, int64_t n, int64_t oh, int64_t ow, int64_t g, AxisTaps& tx, AxisTaps& ty) {
  const float* p = grid + ((n * s.out_h + oh) * s.out_w + ow) * 2 * s.groups;
  tx = axis_taps(s, grid_sample_source(p[g], ow, s.in_w, s.out_w, s.align_corners, s.offsets), s.in_w);
  ty = axis_taps(s, grid_sample_source(p[s.groups + g], oh, s.in_h, s.out_h, s.align_corners, s.offsets), s.in_h);
}

void sample_row(const GridSampleShape& s, const float* x, const float* grid, float* y, int64_t n, int64_t oh) {
  const int64_t per_group = s.channels / s.groups;
  const float* xn = x + n * s.in_h * s.in_w * s.channels;
  for (int64_t ow = 0; ow < s.out_w; ++ow) {
    float* out = y + ((n * s.out_h + oh) * s.out_w + ow) * s.channels;
    for (int64_t g = 0; g < s.groups; ++g) {
      AxisTaps tx, ty;
      point_taps(s, grid, n, oh, ow, g, tx, ty);
      float* o = out + g * per_group;
      const int64_t at = g * per_group;
      if (tx.count == 2 && ty.count == 2 && tx.index[0] >= 0 && tx.index[1] >= 0 && ty.index[0] >= 0 && ty.index[1] >= 0) {
        // Bilinear inside the map (the common case): the four taps in one pass, summed in
        // the order of the general loop below.
        const float* r0 = xn + ty.index[0] * s.in_w * s.channels + at;
        const float* r1 = xn + ty.index[1] * s.in_w * s.channels + at;
        const float* a = r0 + tx.index[0] * s.channels;
        const float* b = r0 + tx.index[1] * s.channels;
        const float* c = r1 + tx.index[0] * s.channels;
        const float* d = r1 + tx.index[1] * s.channels;
        const float wa = ty.weight[0] * tx.weight[0], wb = ty.weight[0] * tx.weight[1];
        const float wc = ty.weight[1] * tx.weight[0], wd = ty.weight[1] * tx.weight[1];
        for (int64_t k = 0; k < per_group; ++k) o[k] = ((wa * a[k] + wb * b[k]) + wc * c[k]) + wd * d[k];
        continue;
      }
      for (int64_t c = 0; c < per_group; ++c) o[c] = 0.f;
      for (int i = 0; i < ty.count; ++i) {
        if (ty.index[i] < 0) continue;
        for (int j = 0; j < tx.count; ++j) {
          if (tx.index[j] < 0) continue;
          const float w = ty.weight[i] * tx.weight[j];
          const float* src = xn + (ty.index[i] * s.in_w + tx.index[j]) * s.channels + at;
          for (int64_t c = 0; c < per_group; ++c) o[c] += w * src[c];
        }
      }
    }
  }
}

}  // namespace

void grid_sample_reference(const GridSampleShape& s, const float* x, const float* grid, float* y) {
  const int64_t per_group = s.channels / s.groups;
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t oh = 0; oh < s.out_h; ++oh)
      for (int64_t ow = 0; ow < s.out_w; ++ow)
        for (int64_t c = 0; c < s.channels; ++c) {
          AxisTaps tx, ty;
          point_taps(s, grid, n, oh, ow, c / per_group, tx, ty);
          double sum = 0.0;
          for (int i = 0; i < ty.count; ++i)
            for (int j = 0; j < tx.count; ++j)
              if (ty.index[i] >= 0 && tx.index[j] >= 0)
                sum += static_cast<double>(ty.weight[i] * tx.weight[j]) * x[((n * s.in_h + ty.index[i]) * s.in_w + tx.index[j]) * s.channels + c];
          y[((n * s.out_h + oh) * s.out_w + ow) * s.channels + c] = static_cast<float>(sum);
        }
}

void grid_sample(const GridSampleShape& s, const float* x, const float* grid, float* y, int threads) {
  const int64_t rows = s.batch * s.out_h;
  (void)threads;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && rows > 1)
  for (int64_t r = 0; r < rows; ++r) sample_row(s, x, grid, y, r / s.out_h, r % s.out_h);
}

}  // namespace edgegan::cpu
