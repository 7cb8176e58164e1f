// Reduce on the GPU (kernels_cpu/reduce/reduce.h defines it): one thread per output
// value, summing its elements in index order (deterministic, no atomics).
#pragma once

#include <cuda_runtime_api.h>

#include "kernels_common/reduce_shape.h"

namespace edgegan::cuda {

void reduce(const kernels::ReduceShape& s, kernels::ReduceOp op, const float* x, float* y, cudaStream_t stream);

}  // namespace edgegan::cuda
