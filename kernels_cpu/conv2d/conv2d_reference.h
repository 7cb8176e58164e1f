// 2-D convolution, NHWC, as plain loops over ONNX-layout weights [Cout][Cin][kh][kw]:
// obviously correct and slow; the tests' reference for conv2d_trimmed.
#pragma once

#include "kernels_common/conv_geometry.h"
#include "kernels_cpu/common/epilogue.h"

namespace edgegan::cpu {

void conv2d_reference(const ConvShape& shape, const float* x, const float* onnx_weights, float* y, const Epilogue& epilogue);

// ONNX [Cout][Cin][kh][kw] -> [kh][kw][Cin][Cout], the layout the model file stores (done by the converter).
void pack_conv2d_weights(const ConvShape& shape, const float* onnx_weights, float* packed);

}  // namespace edgegan::cpu
