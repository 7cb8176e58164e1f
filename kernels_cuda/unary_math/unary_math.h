// UnaryMath on the GPU (kernels_cpu/unary_math/unary_math.h defines it): one thread per
// element, the same IEEE single-precision functions (the build does not use fast math).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels_common/unary_math.h"

namespace edgegan::cuda {

// In place allowed.
void unary_math(int64_t count, kernels::UnaryMathOp op, float exponent, const float* x, float* y, cudaStream_t stream);

}  // namespace edgegan::cuda
