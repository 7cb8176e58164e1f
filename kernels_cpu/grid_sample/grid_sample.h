// GridSample on NHWC maps (kernels_common/grid_sample_shape.h has the formulas): x
// [N][H][W][C], grid [N][Ho][Wo][2*groups], y [N][Ho][Wo][C].
#pragma once

#include "kernels_common/grid_sample_shape.h"

namespace edgegan::cpu {

// Plain loops, one output value at a time: what the tests hold the kernels to.
void grid_sample_reference(const GridSampleShape& s, const float* x, const float* grid, float* y);

// Parallel over output rows; per output pixel and group the taps are found once and the
// group's contiguous channels blended in a loop the compiler vectorises. Each output
// value is written once: deterministic for any thread count.
void grid_sample(const GridSampleShape& s, const float* x, const float* grid, float* y, int threads);

// The gradients from dy [N][Ho][Wo][C]: dx [N][H][W][C] (nullptr: not wanted), each
// output value's weights scattered back to the pixels it read; dgrid (nullptr: not
// wanted), the sampled value's slope along each coordinate times the coordinate's
// derivative through the padding (0 where border or reflection clamps, the sign of each
// reflection) and the normalisation, as torch's grid_sampler backward. Nearest has no
// slope (dgrid 0). accumulate_*: add to what is there instead of overwriting. Parallel
// over batch samples, each writing only its own: deterministic for any thread count.
void grid_sample_backward(const GridSampleShape& s, const float* x, const float* grid, const float* dy, float* dx, bool accumulate_dx, float* dgrid,
                          bool accumulate_dgrid, int threads);

}  // namespace edgegan::cpu
