// Gradients of the convolution (conv2d_trimmed.h), e.g. a discriminator's, NHWC.
//   dX = the transposed convolution of dY with the same weights, split into its
//        phases, so no zero is inserted into dY: the split forward kernel runs on dY;
//   dW = per tap, inputᵀ · dY: per panel of output pixels the input pixels a group of
//        taps reads (stride*Cin apart) are gathered, one GEMM with K = the panel;
//   db = bias_backward (common/epilogue.h).
#pragma once

#include <vector>

#include "kernels_cpu/conv2d/conv2d_trimmed.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"

namespace edgegan::cpu {

// Plain loops over ONNX-layout weights W[Cout][Cin][kh][kw]; any output pointer may be null.
void conv2d_backward_reference(const ConvShape& shape, const float* x, const float* onnx_weights, const float* dy, float* dx,
                               float* d_onnx_weights, float* dbias);

// The transposed view of a convolution: running it forward on dY (the split transposed
// conv, conv_transpose2d_split.h) gives dX. Its sub-kernels are the conv's taps transposed,
// grouped by phase; `storage` holds them (conv2d_backward_input_workspace floats).
struct ConvInputGradient {
  ConvShape shape;
  ConvTranspose2DWeights split;
};
int64_t conv2d_backward_input_workspace(const ConvShape& shape);
ConvInputGradient make_conv2d_input_gradient(const ConvShape& shape, const float* packed_weights, float* storage);

void conv2d_backward_input(const ConvInputGradient& plan, const float* dy, float* dx, int threads);
// The same from the packed weights [kh][kw][Cin][Cout] directly: the view is rebuilt in
// the workspace per call (the weights change every training step). Below 16 input
// channels (an image), dY · Wᵀ into columns instead, then added into dX (col2im).
void conv2d_backward_input(const ConvShape& shape, const float* packed_weights, const float* dy, float* dx, float* workspace,
                           int threads);

// d_packed_weights [kh][kw][Cin][Cout] (overwritten).
void conv2d_backward_weights(const ConvShape& shape, const float* x, const float* dy, float* d_packed_weights, int threads);

}  // namespace edgegan::cpu
