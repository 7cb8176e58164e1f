#include "kernels_cpu/grid_sample/grid_sample.h"

#include <algorithm>
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

// A coordinate through the padding, with its derivative (torch's *_set_grad forms).
float pad_with_grad(const GridSampleShape& s, float c, int64_t size, float& grad) {
  grad = 1.f;
  if (s.padding == GridSamplePadding::kZeros) return c;
  if (s.padding == GridSamplePadding::kReflection) {
    const float l = static_cast<float>(size);
    const float twice_low = s.align_corners ? 0.f : -1.f, twice_high = s.align_corners ? 2.f * (l - 1.f) : 2.f * l - 1.f;
    if (twice_low == twice_high) {
      grad = 0.f;
      return 0.f;
    }
    const float low = twice_low * 0.5f, span = (twice_high - twice_low) * 0.5f;
    float d = c - low, sign = 1.f;
    if (d < 0.f) d = -d, sign = -1.f;
    const float extra = std::fmod(d, span), flips = std::floor(d / span);
    if (std::fmod(flips, 2.f) == 0.f) {
      c = extra + low;
      grad = sign;
    } else {
      c = span - extra + low;
      grad = -sign;
    }
  }
  // Border, and reflection's final clamp: no slope where the coordinate is clamped.
  if (!(c > 0.f)) {
    grad = 0.f;
    return 0.f;
  }
  if (c >= static_cast<float>(size - 1)) {
    grad = 0.f;
    return static_cast<float>(size - 1);
  }
  return c;
}

// One axis for the backward: the taps (as axis_taps), the weights' derivatives along the
// coordinate, and the coordinate's derivative by the grid value.
struct AxisGrad {
  AxisTaps taps;
  float dweight[4] = {0.f, 0.f, 0.f, 0.f};
  float dcoord = 0.f;
};

AxisGrad axis_grad(const GridSampleShape& s, float v, int64_t o, int64_t size, int64_t out_size) {
  AxisGrad a;
  const float c = grid_sample_source(v, o, size, out_size, s.align_corners, s.offsets);
  a.dcoord = s.offsets ? 1.f : (s.align_corners ? 0.5f * static_cast<float>(size - 1) : 0.5f * static_cast<float>(size));
  a.taps = axis_taps(s, c, size);
  if (s.mode == GridSampleMode::kNearest) return a;
  if (s.mode == GridSampleMode::kBicubic) {
    // d/dt of the cubic weights at t = c - floor(c) (A = -0.75); the taps' indices are padded, the coordinate is not.
    const float t = c - std::floor(c), A = -0.75f;
    const float x0 = t + 1.f, x1 = t, x2 = 1.f - t, x3 = 2.f - t;
    a.dweight[0] = (3.f * A * x0 - 10.f * A) * x0 + 8.f * A;
    a.dweight[1] = (3.f * (A + 2.f) * x1 - 2.f * (A + 3.f)) * x1;
    a.dweight[2] = -((3.f * (A + 2.f) * x2 - 2.f * (A + 3.f)) * x2);
    a.dweight[3] = -((3.f * A * x3 - 10.f * A) * x3 + 8.f * A);
    return a;
  }
  float dpad = 1.f;
  pad_with_grad(s, c, size, dpad);
  a.dcoord *= dpad;
  a.dweight[0] = -1.f;
  a.dweight[1] = 1.f;
  return a;
}

void backward_sample(const GridSampleShape& s, const float* x, const float* grid, const float* dy, float* dx, float* dgrid, bool accumulate_dgrid, int64_t n) {
  const int64_t per_group = s.channels / s.groups;
  const float* xn = x + n * s.in_h * s.in_w * s.channels;
  float* dxn = dx ? dx + n * s.in_h * s.in_w * s.channels : nullptr;
  for (int64_t oh = 0; oh < s.out_h; ++oh)
    for (int64_t ow = 0; ow < s.out_w; ++ow) {
      const int64_t pixel = (n * s.out_h + oh) * s.out_w + ow;
      const float* p = grid + pixel * 2 * s.groups;
      const float* g_out = dy + pixel * s.channels;
      for (int64_t g = 0; g < s.groups; ++g) {
        const AxisGrad ax = axis_grad(s, p[g], ow, s.in_w, s.out_w), ay = axis_grad(s, p[s.groups + g], oh, s.in_h, s.out_h);
        double slope_x = 0.0, slope_y = 0.0;
        for (int i = 0; i < ay.taps.count; ++i) {
          if (ay.taps.index[i] < 0) continue;
          for (int j = 0; j < ax.taps.count; ++j) {
            if (ax.taps.index[j] < 0) continue;
            const int64_t at = (ay.taps.index[i] * s.in_w + ax.taps.index[j]) * s.channels + g * per_group;
            const float w = ay.taps.weight[i] * ax.taps.weight[j];
            double dot = 0.0;  // sum over the group's channels of dy * x at this tap
            for (int64_t c = 0; c < per_group; ++c) {
              const float d = g_out[g * per_group + c];
              if (dxn) dxn[at + c] += w * d;
              dot += static_cast<double>(d) * xn[at + c];
            }
            slope_x += dot * ay.taps.weight[i] * ax.dweight[j];
            slope_y += dot * ay.dweight[i] * ax.taps.weight[j];
          }
        }
        if (!dgrid) continue;
        float* dg = dgrid + pixel * 2 * s.groups;
        const float gx = static_cast<float>(slope_x) * ax.dcoord, gy = static_cast<float>(slope_y) * ay.dcoord;
        dg[g] = accumulate_dgrid ? dg[g] + gx : gx;
        dg[s.groups + g] = accumulate_dgrid ? dg[s.groups + g] + gy : gy;
      }
    }
}

}  // namespace

void grid_sample_backward(const GridSampleShape& s, const float* x, const float* grid, const float* dy, float* dx, bool accumulate_dx, float* dgrid,
                          bool accumulate_dgrid, int threads) {
  (void)threads;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && s.batch > 1)
  for (int64_t n = 0; n < s.batch; ++n) {
    if (dx && !accumulate_dx) std::fill(dx + n * s.in_h * s.in_w * s.channels, dx + (n + 1) * s.in_h * s.in_w * s.channels, 0.f);
    backward_sample(s, x, grid, dy, dx, dgrid, accumulate_dgrid, n);
  }
}

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
