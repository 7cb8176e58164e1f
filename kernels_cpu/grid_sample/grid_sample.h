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

}  // namespace edgegan::cpu
