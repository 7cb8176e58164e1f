// MatMul on the GPU (kernels_cpu/matmul/matmul.h defines it): 16x16 output tiles
// per block through shared memory, operands read through their strides, each output
// summed over k in order (deterministic).
#pragma once

#include <cuda_runtime_api.h>

#include "kernels_common/matmul_shape.h"

namespace edgegan::cuda {

void matmul(const kernels::MatMulShape& s, const float* a, const float* b, float* y, cudaStream_t stream);

}  // namespace edgegan::cuda
