// GridSample of NHWC maps on the GPU (kernels_common/grid_sample_shape.h has the
// formulas): one thread per output value.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels_common/grid_sample_shape.h"

namespace edgegan::cuda {

// x [N][H][W][C], grid [N][Ho][Wo][2*groups], y [N][Ho][Wo][C] (y distinct from both).
void grid_sample(const kernels::GridSampleShape& s, const float* x, const float* grid, float* y, cudaStream_t stream);

}  // namespace edgegan::cuda
