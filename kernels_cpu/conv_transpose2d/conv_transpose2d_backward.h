// Gradients of the transposed convolution (conv_transpose2d_split.h), for fine-tuning a
// generator on the device. NHWC activations; weights in the split layout the
// model file stores (one [taps_h][taps_w][Cin][Cout] sub-kernel per phase), so a
// tuned model is written back without re-splitting.
//
//   dX = the strided convolution of dY with W, run by the trimmed conv kernel
//        (conv2d_trimmed.h) over the kernel's taps transposed: per block of dX pixels and tap,
//        one GEMM over the dY pixels `stride` apart that the tap reads (no inserted
//        zero is formed, taps reading outside dY are left out);
//   dW = per phase sub-kernel tap: inputᵀ · dY over the pixels that tap connects,
//        K = a whole panel of pixels per GEMM;
//   db = dY summed over batch and pixels (bias_backward, common/epilogue.h).
// Each task owns the output it writes (a dX panel; a sub-kernel tap), so there are
// no atomics and results do not depend on the thread count.
#pragma once

#include <vector>

#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"

namespace edgegan::cpu {

// Plain loops over ONNX-layout weights W[Cin][Cout][kh][kw]; any output pointer may be null.
void conv_transpose2d_backward_reference(const ConvShape& shape, const float* x, const float* onnx_weights, const float* dy,
                                         float* dx, float* d_onnx_weights, float* dbias);

// dx[N, in_h, in_w, Cin] = gradient w.r.t. the input (overwritten). The workspace holds
// the transposed full kernel and the convolution's scratch: callers that run every step
// keep it, rather than allocating it per call. conv_transpose2d_backward_input_workspace
// with threads = 0 counts the kernel only (the call then allocates its other scratch);
// with the call's threads, everything, and with that many floats the call allocates nothing.
int64_t conv_transpose2d_backward_input_workspace(const ConvShape& shape, int threads = 0);
void conv_transpose2d_backward_input(const ConvShape& shape, const ConvTranspose2DWeights& weights, const float* dy, float* dx,
                                     float* workspace, int threads, int64_t workspace_floats = 0);

// d_sub_kernels[p]: gradient of phase p's sub-kernel, each tap in PanelLayout(Cin, Cout,
// panel_columns) like the weights (overwritten; may be null for a tapless phase).
// `workspace` holds conv_transpose2d_backward_weights_workspace floats (nullptr: allocated per call).
int64_t conv_transpose2d_backward_weights_workspace(const ConvShape& shape, const std::vector<AxisPhase>& phases_h,
                                                   const std::vector<AxisPhase>& phases_w, int threads, int64_t panel_columns = 0);
void conv_transpose2d_backward_weights(const ConvShape& shape, const std::vector<AxisPhase>& phases_h,
                                       const std::vector<AxisPhase>& phases_w, const float* x, const float* dy,
                                       const std::vector<float*>& d_sub_kernels, int threads, int64_t panel_columns = 0,
                                       float* workspace = nullptr);

}  // namespace edgegan::cpu
