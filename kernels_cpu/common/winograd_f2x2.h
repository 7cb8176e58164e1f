// The transforms of Winograd's F(2x2, 2x2): a 2x2 block of a stride-1 2x2 correlation
// from a 3x3 input window, with 9 products per channel pair instead of 16 (Lavin &
// Gray 2016). In 1-D, for y0 = d0 g0 + d1 g1 and y1 = d1 g0 + d2 g1:
//   filter  u = (g0, g0 + g1, g1)        input  v = (d0 - d1, d1, d2 - d1)
//   output  y0 = m0 + m1, y1 = m1 + m2   where m = u .* v,
// applied along both axes (element e = 3a + b: a along h, b along w). Every
// coefficient is 0 or +-1, so only the rounding of a few additions is added.
// Two kernels run on them: the split transposed convolution's k = 2*stride phases
// (conv_transpose2d_winograd.h) and the stride-2 4x4 convolution's polyphase
// components (conv2d_winograd_s2.h). Each is an element-wise loop over channels,
// built per ISA (simd_clones.h).
#pragma once

#include <cstdint>

#include "kernels_cpu/common/epilogue.h"

namespace edgegan::cpu {

constexpr int64_t kF2x2Elements = 9;  // a 3x3 transformed window

// v[e][c] (e_stride floats apart) = (Bᵀ d B)[a][b] of the window d[3r + col] (row r
// along h; each a row of `channels` floats), Bᵀ = [[1,-1,0],[0,1,0],[0,-1,1]].
void f2x2_input_transform(const float* const* d, int64_t channels, float* v, int64_t e_stride);

// u[e][0..n) = (G g Gᵀ)[a][b] from the 2x2 filter's rows g = {g00, g01, g10, g11}
// (first index along h; g00 meets the window's first input on both axes), G =
// [[1,0],[1,1],[0,1]]; for `rows` rows, g's g_stride and u's u_stride floats apart.
void f2x2_filter_transform(const float* const* g, int64_t g_stride, float* const* u, int64_t u_stride, int64_t rows, int64_t n);

// One window's 2x2 outputs out[2a + b] (nullptr: not computed) = f((Aᵀ m A)[a][b] +
// bias) + residual, Aᵀ = [[1,1,0],[0,1,1]], from element e's products m[e][0..width):
// the epilogue of output channels [column, column + width). kNone, kRelu and kLeakyRelu
// are applied as the sums are stored; the others, and the residual (residual[2a + b];
// the array or an entry may be null), right after.
void f2x2_output_transform(const float* const* m, int64_t width, float* const* out, const float* const* residual, const Epilogue& ep,
                           int64_t column);

// The sliced kernels (filters made a slice at a time, one 64-column block): the
// transformed filters' slice is [e][panel][depth][kF2x2SlicePanel] (two 32-column
// panels), and a chunk of windows' products are m[e][chunk][width] = the windows'
// transformed inputs (element e's row of window w at v + e * e_stride + w * depth)
// times the slice, for windows c0 .. c0 + chunk. `zeros`: a row of at least
// kF2x2SlicePanel zeros (the GEMMs' starting sums).
constexpr int64_t kF2x2SlicePanel = 32;
constexpr int64_t kF2x2SliceBlock = 64;
void f2x2_slice_products(const float* v, int64_t e_stride, int64_t depth, int64_t c0, int64_t chunk, const float* slice, int64_t width,
                         const float* zeros, float* m);

}  // namespace edgegan::cpu
