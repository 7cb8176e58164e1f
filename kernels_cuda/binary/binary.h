// Element-wise y = a (op) b with ONNX broadcasting on the GPU (kernels_cpu/binary/binary.h
// defines it): the shapes are collapsed on the host as the CPU does (size-1 output
// dimensions dropped, neighbours read alike merged), so the equal-shape residual add
// is one flat loop and every broadcast is a strided gather of at most 8 dimensions.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels_common/binary_shape.h"

namespace edgegan::cuda {

// y may be a or b where that operand has the output's shape (in place).
void binary(const kernels::BinaryShape& s, kernels::BinaryOp op, const float* a, const float* b, float* y, cudaStream_t stream);

}  // namespace edgegan::cuda
