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
// grouped by phase.
struct ConvInputGradient {
  ConvShape conv;   // the convolution
  ConvShape shape;  // its transposed view, dY -> dX
  ConvTranspose2DWeights split;
};
// The view's geometry, planned once (its phase tables are allocated here, not per call).
ConvInputGradient plan_conv2d_input_gradient(const ConvShape& shape);
// Workspace floats of conv2d_backward_input: with threads = 0, the transposed taps only
// (the call then allocates its other scratch); with the call's threads, everything it needs.
int64_t conv2d_backward_input_workspace(const ConvShape& shape, int threads = 0);
// The view with its sub-kernels transposed into `storage` (conv2d_backward_input_workspace(shape) floats).
ConvInputGradient make_conv2d_input_gradient(const ConvShape& shape, const float* packed_weights, float* storage);
void conv2d_backward_input(const ConvInputGradient& view, const float* dy, float* dx, int threads);

// dX (overwritten) from the current packed weights [kh][kw][Cin][Cout]: the view's
// sub-kernels are rebuilt in the workspace per call (the weights change every training
// step). Below 16 input channels (an image), dY · Wᵀ into columns instead, then added
// into dX (col2im). With workspace_floats >= conv2d_backward_input_workspace(shape,
// threads) and a planned view, the call allocates nothing.
void conv2d_backward_input(ConvInputGradient& view, const float* packed_weights, const float* dy, float* dx, float* workspace,
                           int64_t workspace_floats, int threads);
// The same, planning the view per call.
void conv2d_backward_input(const ConvShape& shape, const float* packed_weights, const float* dy, float* dx, float* workspace,
                           int threads);

// d_packed_weights [kh][kw][Cin][Cout] (overwritten). `workspace` holds
// conv2d_backward_weights_workspace floats (nullptr: allocated per call).
int64_t conv2d_backward_weights_workspace(const ConvShape& shape, int threads);
void conv2d_backward_weights(const ConvShape& shape, const float* x, const float* dy, float* d_packed_weights, int threads,
                             float* workspace = nullptr);

}  // namespace edgegan::cpu
