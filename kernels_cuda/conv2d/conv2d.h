// The convolutions the implicit GEMM does not take as they are: those that read their
// input through a fused input map (a nearest upsampling and/or a reflect, edge or wrap
// pad folded in; kernels_cpu/common/conv_input_map.h), and grouped or depthwise ones.
//   - conv2d_input_map_gather materialises the map (per-axis index tables built on the
//     host once) so that an ungrouped convolution runs on the GEMM over it;
//   - conv2d_direct computes any convolution, grouped or not, one thread per output
//     element, reading the file's weights [kh][kw][Cin/groups][Cout] in place and its
//     input directly or through the tables. Depthwise layers are memory-bound: the
//     threads of a warp read consecutive output channels, so their weights and (for
//     depthwise) their inputs are contiguous.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels_common/conv_geometry.h"
#include "kernels_cuda/common/activation.h"

namespace edgegan::cuda {

// A fused input map in device memory: logical pixel (r, c) of image n is physical pixel
// (rows[r], cols[c]) of x [N][src_h][src_w][C]. rows == nullptr: no map (x is the
// logical map itself).
struct DeviceInputMap {
  const int* rows = nullptr;  // [shape.h.in]
  const int* cols = nullptr;  // [shape.w.in]
  int src_h = 0, src_w = 0;
};

// out [N][h][w][C] = x read through `map` (h, w: the logical size, the tables' lengths).
void conv2d_input_map_gather(int batch, int h, int w, int channels, const DeviceInputMap& map, const float* x, float* out,
                             cudaStream_t stream);

// Whether conv2d_direct runs `shape` on its few-input-channel kernel (ungrouped, 1-4
// input channels: weights staged per 32 output channels, outputs kept in registers),
// which beats the implicit GEMM there.
bool conv2d_few_channels(const kernels::ConvShape& shape, int groups);

// y = act(conv(x) + bias) (+ residual) with `groups` groups (1: ungrouped; Cin: depthwise):
// output channel co reads input channels [g*Cin/groups, (g+1)*Cin/groups), g = co / (Cout/groups).
// shape: the geometry over the map the convolution sees (its logical input). bias and
// residual may be null; residual must not share memory with y.
void conv2d_direct(const kernels::ConvShape& shape, int groups, const DeviceInputMap& map, const float* x, const float* weights,
                   const float* bias, ActivationParams activation, const float* residual, float* y, cudaStream_t stream);

}  // namespace edgegan::cuda
