// Softmax on the GPU (kernels_cpu/softmax/softmax.h defines it): one thread per
// (outer, inner) line along the axis, max, exponentials and sum in index order.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels_common/softmax_shape.h"

namespace edgegan::cuda {

// x != y.
void softmax(const kernels::SoftmaxShape& s, const float* x, float* y, cudaStream_t stream);

}  // namespace edgegan::cuda
