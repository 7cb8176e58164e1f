// Transposed convolution by zero insertion, the baseline naive engines run: builds
// the zero-inserted, padded input and runs a stride-1 convolution with the flipped
// full kernel over it. On the same GEMM as the split kernel, so timing ratios show
// the algorithm.
#pragma once

#include "kernels_common/conv_geometry.h"
#include "kernels_cpu/common/epilogue.h"

namespace edgegan::cpu {

// full_kernel: [kh][kw][Cin][Cout] (assemble_conv_transpose2d_full_kernel, kTapsFirst).
int64_t conv_transpose2d_zero_insert_workspace(const ConvShape& shape);  // floats
void conv_transpose2d_zero_insert(const ConvShape& shape, const float* full_kernel, const float* x, float* y, float* workspace,
                                  const Epilogue& epilogue, int threads);

}  // namespace edgegan::cpu
