// PReLU on the GPU (kernels_cpu/prelu/prelu.h defines it): y = x > 0 ? x : slope[c] * x
// over `pixels` rows of `channels` values; channels = 1: one slope for every value.
#pragma once

#include <cuda_runtime_api.h>

namespace edgegan::cuda {

// x == y allowed.
void prelu(long long pixels, long long channels, const float* slope, const float* x, float* y, cudaStream_t stream);

}  // namespace edgegan::cuda
