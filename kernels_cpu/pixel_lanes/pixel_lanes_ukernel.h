// Pixel-lanes micro-kernels (conv_transpose2d_pixel_lanes.h), one family per ISA
// that has one (AVX-512 today; the others take the dot path):
//
//   run: for up to two blocks of 16 consecutive positions q (of one phase row each:
//   two blocks of one row, or the same columns of two consecutive rows), all four
//   phases of a stride-2x2 layer at once:
//     acc[a][b][co][p][l] = sum over ci, and over the taps (r, c) of phase (a, b),
//         rows[p][r][ci * plane_stride + l - c] * weights[ci * slots + slot(a, b, r, c, co)]
//   where r, c are the taps' effective offsets relative to the plan's minimum and
//   slot() counts (r, c, a, b, co) in that loop order over the pairs that exist.
//
//   transpose: dst[c * plane_stride + p] = src[p * channels + c] for c < channels and
//   p < row_floats (a multiple of 16), zero past `pixels` (NHWC pixels into planes,
//   each plane row written whole, its zero padding included).
//
//   interleave: the 32 output pixels of one block's two w-phases, which alternate
//   along the output row (first[co][l] at pixel 2l, second[co][l] at pixel 2l + 1),
//   plus bias, as 32 * cout contiguous floats:
//     out[(2l + i) * cout + co] = (i ? second : first)[co * channel_stride + l] + bias[co]
//
//   activate: the activation, in place, on n contiguous floats (the same functions
//   as apply_activation, vectorised for the family: activate_run__avx512).
#pragma once

#include <cstdint>

#include "kernels_cpu/conv_transpose2d/conv_transpose2d_pixel_lanes.h"
#include "kernels_cpu/common/cpu_isa.h"

namespace edgegan::cpu {

constexpr int kPixelLanesWidth = 16;   // lanes per vector (the AVX-512 family)
constexpr int kPixelLanesMaxBlocks = 2;

// The axis patterns the families are built for, as the plan's per-phase masks
// {mask[0], mask[1]} (bit r: a tap at effective offset e_min + r).
struct PixelLanesAxisPattern {
  unsigned phase0, phase1;
  int span;
  const char* layer;  // the layer that has it
};
constexpr PixelLanesAxisPattern kPixelLanesAxisPatterns[] = {
    {0b011, 0b110, 3, "k4 s2 p1"},
    {0b111, 0b011, 3, "k5 s2 p2 op1"},
    {0b011, 0b010, 2, "k3 s2 p1 op1"},
};

struct PixelLanesArgs {
  int64_t cin = 0, plane_stride = 0;
  // Per block p and relative row offset r: the plane row it reads, at (ci 0, lane 0, c = 0).
  const float* rows[kPixelLanesMaxBlocks][kPixelLanesMaxSpan] = {};
  const float* weights = nullptr;  // [cin][plan.slots]
  float* acc = nullptr;            // [2][2][cout][blocks][16]
  int blocks = 1;                  // 1 .. kPixelLanesMaxBlocks
};

using PixelLanesFn = void (*)(const PixelLanesPlan& plan, const PixelLanesArgs& args);
using PlanesFromPixelsFn = void (*)(const float* src, int64_t pixels, int64_t channels, float* dst, int64_t plane_stride,
                                   int64_t row_floats);
using InterleavePhasesFn = void (*)(const float* first, const float* second, int64_t channel_stride, int cout,
                                   const float* bias, float* out);
using ActivateFn = void (*)(float* y, int64_t n, Activation activation, float alpha, float beta);

struct PixelLanesUkernel {
  PixelLanesFn run;  // nullptr: the family has none
  PlanesFromPixelsFn transpose;
  InterleavePhasesFn interleave;
  ActivateFn activate;
  Isa isa;
  const char* name;
};

const PixelLanesUkernel& pixel_lanes_ukernel();
const PixelLanesUkernel& pixel_lanes_ukernel(Isa isa);

#if defined(EDGEGAN_HAVE_X86_KERNELS)
void pixel_lanes_ukernel_4phase__avx512(const PixelLanesPlan& plan, const PixelLanesArgs& args);
void planes_from_pixels_16x16__avx512(const float* src, int64_t pixels, int64_t channels, float* dst, int64_t plane_stride,
                                     int64_t row_floats);
void interleave_phases_16__avx512(const float* first, const float* second, int64_t channel_stride, int cout, const float* bias,
                                  float* out);
#endif

}  // namespace edgegan::cpu
