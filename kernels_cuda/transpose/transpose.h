// Transpose on the GPU (kernels_cpu/transpose/transpose.h defines it): one thread per
// output element, gathered from the input through its strides.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels_common/transpose_shape.h"

namespace edgegan::cuda {

// x != y.
void transpose(const kernels::TransposeShape& s, const float* x, float* y, cudaStream_t stream);

}  // namespace edgegan::cuda
