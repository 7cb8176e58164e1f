// Transposed convolution, NHWC, as a direct scatter loop over ONNX-layout weights
// [Cin][Cout][kh][kw]: obviously correct and slow; the tests' reference for every
// other conv_transpose2d implementation.
#pragma once

#include "kernels_common/conv_geometry.h"
#include "kernels_cpu/common/epilogue.h"

namespace edgegan::cpu {

void conv_transpose2d_reference(const ConvShape& shape, const float* x, const float* onnx_weights, float* y,
                                const Epilogue& epilogue);

}  // namespace edgegan::cpu
