// A strided slice along one axis on the GPU (kernels_cpu/slice/slice.h defines it):
// y[o][j][i] = x[o][start + j*step][i], step possibly negative.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels_common/slice_shape.h"

namespace edgegan::cuda {

// x != y.
void slice(const kernels::SliceShape& s, const float* x, float* y, cudaStream_t stream);

}  // namespace edgegan::cuda
