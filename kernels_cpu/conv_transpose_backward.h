// Gradients of the transposed convolution (conv_transpose.h), for fine-tuning a
// generator on the device. NHWC activations; weights in the split layout the
// model file stores (one [taps_h][taps_w][Cin][Cout] sub-kernel per phase), so a
// tuned model is written back without re-splitting.
//
//   dX = the strided convolution of dY with W, run by the trimmed conv kernel
//        (conv2d.h) over the kernel's taps transposed: per block of dX pixels and tap,
//        one GEMM over the dY pixels `stride` apart that the tap reads (no inserted
//        zero is formed, taps reading outside dY are left out);
//   dW = per phase sub-kernel tap: inputᵀ · dY over the pixels that tap connects,
//        K = a whole panel of pixels per GEMM;
//   db = dY summed over batch and pixels.
// Each task owns the output it writes (a dX panel; a sub-kernel tap), so there are
// no atomics and results do not depend on the thread count.
#pragma once

#include <vector>

#include "kernels_cpu/conv_transpose_geometry.h"

namespace edgegan::cpu {

// Plain loops over ONNX-layout weights W[Cin][Cout][kh][kw]; any output pointer may be null.
void conv_transpose2d_backward_reference(const DeconvShape& shape, const float* x, const float* onnx_weights, const float* dy,
                                         float* dx, float* d_onnx_weights, float* dbias);

// dx[N, in_h, in_w, Cin] = gradient w.r.t. the input (overwritten). The workspace
// (conv_transpose2d_backward_input_workspace floats) holds the transposed full kernel:
// callers that run every step keep it, rather than allocating it per call.
int64_t conv_transpose2d_backward_input_workspace(const DeconvShape& shape);
void conv_transpose2d_backward_input(const DeconvShape& shape, const SplitDeconvWeights& weights, const float* dy, float* dx,
                                     float* workspace, int threads);

// d_sub_kernels[p]: gradient of phase p's sub-kernel, each tap in PanelLayout(Cin, Cout,
// panel_columns) like the weights (overwritten; may be null for a tapless phase).
void conv_transpose2d_backward_weights(const DeconvShape& shape, const std::vector<AxisPhase>& phases_h,
                                       const std::vector<AxisPhase>& phases_w, const float* x, const float* dy,
                                       const std::vector<float*>& d_sub_kernels, int threads, int64_t panel_columns = 0);

// dbias[c] = sum of dy over `pixels` pixels of `channels` (overwritten).
void bias_backward(int64_t pixels, int64_t channels, const float* dy, float* dbias);

// ---- zero-insertion backward: the baseline the split backward is measured against.
// It runs on the same GEMM (gemm.h) and does what a zero-insertion implementation
// must: the forward is a stride-1 correlation of the zero-dilated, padded input Z
// (conv_transpose2d_zero_insert) with the flipped full kernel [kh][kw][Cin][Cout], so
//   dZ = the full correlation of dY (padded by dilation*(kernel-1) on every side) with
//        the full kernel, computed at every position of Z, inserted zeros included;
//        dX = dZ at the input's positions, the rest dropped;
//   dW = per full-kernel tap, Zᵀ · dY over all output pixels: every product with an
//        inserted zero is computed.
// Both run on the split backward's micro-kernels (dW through the same tap-gathering
// driver, tap_gather.h), so timing ratios show the algorithm. Workspaces (in floats) hold dZ and Z, as a zero-insertion engine
// materialises them; results do not depend on the thread count.
int64_t conv_transpose2d_zero_insert_backward_input_workspace(const DeconvShape& shape);
void conv_transpose2d_zero_insert_backward_input(const DeconvShape& shape, const float* full_kernel, const float* dy, float* dx,
                                                 float* workspace, int threads);
int64_t conv_transpose2d_zero_insert_backward_weights_workspace(const DeconvShape& shape);
// d_full_kernel [kh][kw][Cin][Cout] (overwritten).
void conv_transpose2d_zero_insert_backward_weights(const DeconvShape& shape, const float* x, const float* dy, float* d_full_kernel,
                                                   float* workspace, int threads);

// The inverse of assemble_full_deconv_kernel (kTapsFirst): writes the full kernel
// [kh][kw][Cin][Cout] back into the phase sub-kernels, each tap in PanelLayout(Cin,
// Cout, panel_columns) (null entries: tapless phases).
void scatter_full_deconv_kernel(const DeconvShape& shape, const std::vector<AxisPhase>& phases_h,
                                const std::vector<AxisPhase>& phases_w, const float* full_kernel,
                                const std::vector<float*>& sub_kernels, int64_t panel_columns = 0);

}  // namespace edgegan::cpu
