// Grouped and depthwise 2-D convolution, NHWC. The input channels are split into
// `groups` equal slices and the output channels likewise; output group g reads only
// input group g. ONNX weights are [Cout][Cin/groups][kh][kw]; the model file stores
//   [kh][kw][Cin/groups][Cout]   (pack_conv2d_grouped_weights; groups = 1: pack_conv2d_weights)
// i.e. per tap and in-group input channel one row over ALL output channels, group g's
// weights in columns [g*Cout/groups, (g+1)*Cout/groups). The depthwise kernel then reads
// one contiguous channel vector per tap, and the grouped path group g's block with
// leading dimension Cout.
//
//   depthwise (groups == Cin, Cout = multiplier*Cin): a direct kernel vectorised over the
//     channel axis, taps trimmed at borders, parallel over output rows (N x out_h);
//     backward: dX in gather form (per input pixel, parallel over input rows), dW per
//     block of output channels (each block's sums over every pixel in one fixed order,
//     so the result does not depend on the thread count), db = bias_backward.
//   grouped (1 < groups < Cin): per group, its channels gathered into the workspace and
//     the ungrouped kernels (conv2d_trimmed.h, conv2d_backward.h) run on the group's
//     shape; results scattered back.
#pragma once

#include <cstdint>

#include "kernels_cpu/conv2d/conv2d_backward.h"
#include "kernels_common/conv_geometry.h"
#include "kernels_cpu/common/conv_input_map.h"
#include "kernels_cpu/common/epilogue.h"

namespace edgegan::cpu {

// Plain loops over ONNX-layout grouped weights [Cout][Cin/groups][kh][kw].
void conv2d_grouped_reference(const ConvShape& shape, int64_t groups, const float* x, const float* onnx_weights, float* y,
                              const Epilogue& epilogue);
// Any output pointer may be null.
void conv2d_grouped_backward_reference(const ConvShape& shape, int64_t groups, const float* x, const float* onnx_weights,
                                       const float* dy, float* dx, float* d_onnx_weights, float* dbias);
// [Cout][Cin/groups][kh][kw] -> [kh][kw][Cin/groups][Cout].
void pack_conv2d_grouped_weights(const ConvShape& shape, int64_t groups, const float* onnx_weights, float* packed);

// groups == Cin (> 1 or not): the depthwise kernels apply.
inline bool conv2d_is_depthwise(const ConvShape& s, int64_t groups) {
  return groups > 1 && groups == s.in_channels && s.out_channels % s.in_channels == 0;
}

// ---- depthwise (packed weights [kh][kw][Cout])
// With `map`, x is read through it (conv_input_map.h; shape: the map the convolution sees).
void conv2d_depthwise(const ConvShape& shape, const float* packed_weights, const float* x, float* y, const Epilogue& epilogue,
                      int threads, const ConvInputMap* map = nullptr);
// dX overwritten.
void conv2d_depthwise_backward_input(const ConvShape& shape, const float* packed_weights, const float* dy, float* dx, int threads);
// dW [kh][kw][Cout] overwritten.
void conv2d_depthwise_backward_weights(const ConvShape& shape, const float* x, const float* dy, float* d_packed_weights,
                                       int threads);

// ---- general grouped (channels gathered per group)
// One group's shape: Cin/groups in, Cout/groups out.
ConvShape conv2d_group_shape(const ConvShape& shape, int64_t groups);
// Forward scratch, floats.
int64_t conv2d_grouped_workspace(const ConvShape& shape, int64_t groups, int threads);
// `workspace`: conv2d_grouped_workspace floats (nullptr: allocated per call). `map` as for conv2d_depthwise.
void conv2d_grouped(const ConvShape& shape, int64_t groups, const float* packed_weights, const float* x, float* y,
                    const Epilogue& epilogue, int threads, float* workspace = nullptr, const ConvInputMap* map = nullptr);
// Backward scratch, floats, with `view` = plan_conv2d_input_gradient(conv2d_group_shape(shape, groups)).
int64_t conv2d_grouped_backward_workspace(const ConvShape& shape, int64_t groups, int threads);
// dX (overwritten; nullptr: not computed) and dW [kh][kw][Cin/groups][Cout] (overwritten;
// nullptr: not computed) from dY. `view` is planned once for the group's shape; with
// workspace_floats >= conv2d_grouped_backward_workspace the call allocates nothing.
void conv2d_grouped_backward(const ConvShape& shape, int64_t groups, ConvInputGradient& view, const float* packed_weights,
                             const float* x, const float* dy, float* dx, float* d_packed_weights, float* workspace,
                             int64_t workspace_floats, int threads);

}  // namespace edgegan::cpu
