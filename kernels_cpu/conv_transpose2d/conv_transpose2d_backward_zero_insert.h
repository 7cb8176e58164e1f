// Zero-insertion backward of the transposed convolution: the baseline the split backward is measured against.
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
#pragma once

#include <vector>

#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"

namespace edgegan::cpu {

int64_t conv_transpose2d_zero_insert_backward_input_workspace(const ConvShape& shape);
void conv_transpose2d_zero_insert_backward_input(const ConvShape& shape, const float* full_kernel, const float* dy, float* dx,
                                                 float* workspace, int threads);
int64_t conv_transpose2d_zero_insert_backward_weights_workspace(const ConvShape& shape);
// d_full_kernel [kh][kw][Cin][Cout] (overwritten).
void conv_transpose2d_zero_insert_backward_weights(const ConvShape& shape, const float* x, const float* dy, float* d_full_kernel,
                                                   float* workspace, int threads);

// The inverse of assemble_conv_transpose2d_full_kernel (kTapsFirst): writes the full kernel
// [kh][kw][Cin][Cout] back into the phase sub-kernels, each tap in PanelLayout(Cin,
// Cout, panel_columns) (null entries: tapless phases).
void scatter_conv_transpose2d_full_kernel(const ConvShape& shape, const std::vector<AxisPhase>& phases_h,
                                const std::vector<AxisPhase>& phases_w, const float* full_kernel,
                                const std::vector<float*>& sub_kernels, int64_t panel_columns = 0);

}  // namespace edgegan::cpu
