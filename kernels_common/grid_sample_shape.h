// GridSample (ONNX GridSample, torch's F.grid_sample; DySample's up-sampling): output
// pixel (n, oh, ow) channel c reads the NHWC map x [N][H][W][C] at the point the grid
// [N][Ho][Wo][2*groups] holds for c's group g = c / (C/groups): channel g is x, channel
// groups + g is y. Per axis of size L, a grid value v becomes the pixel coordinate
//   normalised, align_corners   (v + 1) / 2 * (L - 1)
//   normalised, otherwise       ((v + 1) * L - 1) / 2
//   offsets                     o / s + v        (o: the output index, s = Lo / L)
// (integers are pixel centres). Padding then maps the coordinate into the map as torch
// does: border clamps it to [0, L-1]; reflection reflects it about the outer pixel
// centres (align_corners) or edges and clamps; zeros leaves it. Bilinear reads the 2x2
// pixels around it, nearest the one at round-half-even, each pixel outside the map 0.
// Bicubic (A = -0.75) reads 4x4 around the unpadded coordinate and pads each tap's index.
//
// The formulas are written once here, for the CPU and CUDA kernels (the Vulkan shader
// has them in GLSL, kernels_vulkan/grid_sample/grid_sample.comp).
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define EDGEGAN_GRID_SAMPLE_FN __host__ __device__ inline
#else
#define EDGEGAN_GRID_SAMPLE_FN inline
#endif

namespace edgegan::kernels {

// Numbered as the schema's enums.
enum class GridSampleMode : int { kBilinear = 0, kNearest = 1, kBicubic = 2 };
enum class GridSamplePadding : int { kZeros = 0, kBorder = 1, kReflection = 2 };

struct GridSampleShape {
  int64_t batch = 1;
  int64_t in_h = 1, in_w = 1, channels = 1;
  int64_t out_h = 1, out_w = 1;
  int64_t groups = 1;  // the grid has 2*groups channels
  GridSampleMode mode = GridSampleMode::kBilinear;
  GridSamplePadding padding = GridSamplePadding::kZeros;
  bool align_corners = false;
  bool offsets = false;
};

// The pixel coordinate of grid value v at output index o along an axis of `size`
// input pixels and `out_size` output pixels.
EDGEGAN_GRID_SAMPLE_FN float grid_sample_source(float v, int64_t o, int64_t size, int64_t out_size, bool align_corners, bool offsets) {
  if (offsets) return static_cast<float>(o / (out_size / size)) + v;
  const float l = static_cast<float>(size);
  return align_corners ? (v + 1.f) * 0.5f * (l - 1.f) : ((v + 1.f) * l - 1.f) * 0.5f;
}

// A coordinate clamped to [0, size-1] (NaN becomes 0).
EDGEGAN_GRID_SAMPLE_FN float grid_sample_clamp(float c, int64_t size) {
  const float hi = static_cast<float>(size - 1);
  return c > 0.f ? (c < hi ? c : hi) : 0.f;
}

// The coordinate reflected about low/2 and high/2 (twice the bounds, as torch keeps them).
EDGEGAN_GRID_SAMPLE_FN float grid_sample_reflect(float c, float twice_low, float twice_high) {
  if (twice_low == twice_high) return 0.f;
  const float low = twice_low * 0.5f, span = (twice_high - twice_low) * 0.5f;
  const float d = fabsf(c - low);
  const float extra = fmodf(d, span);
  const float flips = floorf(d / span);
  return fmodf(flips, 2.f) == 0.f ? extra + low : span - extra + low;
}

// The padding mode applied to a coordinate (bilinear, nearest: the point; bicubic: each tap).
EDGEGAN_GRID_SAMPLE_FN float grid_sample_pad(float c, int64_t size, GridSamplePadding padding, bool align_corners) {
  if (padding == GridSamplePadding::kBorder) return grid_sample_clamp(c, size);
  if (padding == GridSamplePadding::kReflection) {
    const float l = static_cast<float>(size);
    c = align_corners ? grid_sample_reflect(c, 0.f, 2.f * (l - 1.f)) : grid_sample_reflect(c, -1.f, 2.f * l - 1.f);
    return grid_sample_clamp(c, size);
  }
  return c;
}

// Whether a coordinate's taps can touch the map at all (false for NaN and far-away
// points, which then read only zeros; keeps the integer conversions in range).
EDGEGAN_GRID_SAMPLE_FN bool grid_sample_near(float c, int64_t size) { return c > -3.f && c < static_cast<float>(size) + 2.f; }

// The cubic convolution weights of the 4 taps floor(c)-1 .. floor(c)+2 at fraction t (A = -0.75).
EDGEGAN_GRID_SAMPLE_FN void grid_sample_cubic_weights(float t, float w[4]) {
  const float a = -0.75f;
  const float x0 = t + 1.f, x1 = t, x2 = 1.f - t, x3 = 2.f - t;
  w[0] = ((a * x0 - 5.f * a) * x0 + 8.f * a) * x0 - 4.f * a;
  w[1] = ((a + 2.f) * x1 - (a + 3.f)) * x1 * x1 + 1.f;
  w[2] = ((a + 2.f) * x2 - (a + 3.f)) * x2 * x2 + 1.f;
  w[3] = ((a * x3 - 5.f * a) * x3 + 8.f * a) * x3 - 4.f * a;
}

}  // namespace edgegan::kernels

// The CPU kernels name these unqualified, and callers as cpu::; one definition.
namespace edgegan::cpu {
using namespace kernels;
}  // namespace edgegan::cpu
