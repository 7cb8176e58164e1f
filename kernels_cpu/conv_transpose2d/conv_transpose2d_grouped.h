// Grouped transposed convolution, NHWC: input channels in `groups` equal slices, output
// channels likewise; input group g feeds output group g only. ONNX weights are
// [Cin][Cout/groups][kh][kw]. Split into phases as the ungrouped op (docs/phase-split.md),
// each phase's sub-kernel holding the groups one after the other:
//   phase p: [groups][taps_h][taps_w][Cin/groups][Cout/groups], each tap's matrix in
//   PanelLayout(Cin/groups, Cout/groups, panel_columns)
// so that group g's part of every phase is the sub-kernel of an ungrouped transposed
// convolution with Cin/groups inputs and Cout/groups outputs.
// The product: per group, its input channels gathered into the workspace, the split
// kernel (conv_transpose2d_split.h: GEMM tiles, or the dot path for narrow groups; no
// Winograd or pixel-lanes form) on the group's view of the weights, its outputs
// scattered back. Backward likewise, with the ungrouped backward kernels.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels_cpu/common/epilogue.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"

namespace edgegan::cpu {

// Plain loops over ONNX-layout grouped weights [Cin][Cout/groups][kh][kw].
void conv_transpose2d_grouped_reference(const ConvShape& shape, int64_t groups, const float* x, const float* onnx_weights, float* y,
                                        const Epilogue& epilogue);
// Any output pointer may be null.
void conv_transpose2d_grouped_backward_reference(const ConvShape& shape, int64_t groups, const float* x, const float* onnx_weights,
                                                 const float* dy, float* dx, float* d_onnx_weights, float* dbias);
// One vector per phase, groups one after the other (above).
std::vector<std::vector<float>> pack_conv_transpose2d_grouped_weights(const ConvShape& shape, int64_t groups,
                                                                  const std::vector<AxisPhase>& phases_h,
                                                                  const std::vector<AxisPhase>& phases_w, const float* onnx_weights,
                                                                  int64_t panel_columns = 0);

// Per group, its view of the op's split weights (float or fp16 sub-kernels offset to the
// group's part, kernels_common's conv_transpose2d_group_sub_kernels; no pixel-lanes plan,
// no Winograd filters). Built once; the views point into `weights`' buffers. The group's
// shape is conv_transpose2d_group_shape.
std::vector<ConvTranspose2DWeights> conv_transpose2d_group_views(const ConvShape& shape, int64_t groups,
                                                                 const ConvTranspose2DWeights& weights);

// Forward scratch, floats.
int64_t conv_transpose2d_grouped_workspace(const ConvShape& shape, const std::vector<ConvTranspose2DWeights>& views, int threads);
// `workspace`: workspace_floats floats; fewer than conv_transpose2d_grouped_workspace: allocated per call.
void conv_transpose2d_grouped(const ConvShape& shape, const std::vector<ConvTranspose2DWeights>& views, const float* x, float* y,
                              const Epilogue& epilogue, int threads, float* workspace = nullptr, int64_t workspace_floats = 0);

// Backward scratch, floats.
int64_t conv_transpose2d_grouped_backward_workspace(const ConvShape& shape, const std::vector<ConvTranspose2DWeights>& views,
                                                    int threads);
// dX (overwritten; nullptr: not computed) and the phases' weight gradients d_sub_kernels
// (grouped layout, overwritten; empty: not computed; a null entry for a tapless phase).
// `group_d_sub_kernels` is the caller's (kept between calls: one entry per phase).
// Float views only.
void conv_transpose2d_grouped_backward(const ConvShape& shape, const std::vector<ConvTranspose2DWeights>& views, const float* x,
                                       const float* dy, float* dx, const std::vector<float*>& d_sub_kernels,
                                       std::vector<float*>& group_d_sub_kernels, int threads, float* workspace,
                                       int64_t workspace_floats);

}  // namespace edgegan::cpu
