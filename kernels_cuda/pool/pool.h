// Average and max pooling of NHWC maps on the GPU (kernels_cpu/pool/pool.h defines
// them: pads, ceil_mode's shorter last window, count_include_pad, dilation, global
// pools): one thread per output float walks its window in the CPU's order.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels_common/pool_shape.h"

namespace edgegan::cuda {

// x != y.
void pool(const kernels::PoolShape& s, kernels::PoolKind kind, bool count_include_pad, const float* x, float* y, cudaStream_t stream);

}  // namespace edgegan::cuda
