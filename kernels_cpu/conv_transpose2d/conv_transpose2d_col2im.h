// Transposed convolution by GEMM + col2im, the baseline PyTorch and ONNX Runtime run
// on CPUs: a GEMM of x with the full kernel into a column buffer of Cout*kh*kw per
// input pixel, then a col2im scatter-add. On the same GEMM as the split kernel.
#pragma once

#include "kernels_common/conv_geometry.h"
#include "kernels_cpu/common/epilogue.h"

namespace edgegan::cpu {

// col_kernel: [Cin][kh][kw][Cout] (assemble_conv_transpose2d_full_kernel, kChannelsFirst).
int64_t conv_transpose2d_col2im_workspace(const ConvShape& shape);  // floats
void conv_transpose2d_col2im(const ConvShape& shape, const float* col_kernel, const float* x, float* y, float* workspace,
                             const Epilogue& epilogue, int threads);

}  // namespace edgegan::cpu
