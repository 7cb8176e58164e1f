// Transposed convolution on the GPU: the split form as implicit-GEMM tasks (one per
// phase, conv_gemm.h), and the two baselines it is measured against, which do what
// the split avoids: zero insertion (materialise the upsampled input, then a stride-1
// convolution that multiplies the inserted zeros) and col2im (a GEMM into a column
// buffer of every tap's product, then a gather that sums them per output). Grouped
// layers run on a direct gather kernel whatever the algorithm (as on the CPU).
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "kernels_common/conv_transpose2d_phases.h"
#include "kernels_cuda/gemm/conv_gemm.h"

namespace edgegan::cuda {

// The split problem: one task per phase (row-major (ph, pw)); phase p's weights
// start at phase_weight_offsets[p] elements (the file's sub-kernels, in panels of
// `panel` columns).
ConvGemmShape conv_transpose2d_split_shape(const kernels::ConvShape& s, const std::vector<kernels::AxisPhase>& phases_h,
                                           const std::vector<kernels::AxisPhase>& phases_w, const std::vector<long long>& phase_weight_offsets,
                                           int panel);

// Zero insertion: x_up [N][(H-1)*sh+1][(W-1)*sw+1][Cin] holds x at multiples of the
// stride and zeros elsewhere; then the stride-1 convolution of x_up with the flipped
// full kernel ([kh][kw][Cin][Cout], conv_transpose2d_flipped_kernel).
ConvGemmShape conv_transpose2d_zero_insert_shape(const kernels::ConvShape& s);
long long conv_transpose2d_upsampled_floats(const kernels::ConvShape& s);
void conv_transpose2d_zero_insert_upsample(const kernels::ConvShape& s, const float* x, float* x_up, cudaStream_t stream);
// The full kernel [kh][kw][Cin][Cout] (kernels::FullKernelLayout::kTapsFirst) with its
// taps reversed, as that convolution reads it; on the host, once.
std::vector<float> conv_transpose2d_flipped_kernel(const kernels::ConvShape& s, const float* taps_first);

// col2im: columns = x [N*H*W][Cin] x Wc [Cin][kh*kw*Cout] (dense_gemm_shape), then
// every output sums the columns of the (input, tap) pairs that land on it.
long long conv_transpose2d_columns_floats(const kernels::ConvShape& s);
void conv_transpose2d_col2im_gather(const kernels::ConvShape& s, const float* columns, const float* bias, ActivationParams activation, float* y,
                                    cudaStream_t stream);

// Grouped (groups > 1): y[n, oh, ow, co] = act(bias + sum over the taps landing on
// (oh, ow) and the group's input channels of x * W), one thread per output element
// (output channel fastest), taps in kernel order. `weights`: the whole kernel per group,
// [groups][kh][kw][Cin/groups][Cout/groups] (conv_transpose2d_grouped_full_kernel).
void conv_transpose2d_grouped_direct(const kernels::ConvShape& s, int groups, const float* x, const float* weights, const float* bias,
                                     ActivationParams activation, float* y, cudaStream_t stream);
// That kernel assembled on the host from the file's grouped phase sub-kernels (float;
// `w` as the CPU's grouped kernel takes them: each phase's groups one after the other).
std::vector<float> conv_transpose2d_grouped_full_kernel(const kernels::ConvShape& s, int groups, const kernels::ConvTranspose2DSubKernels& w);

}  // namespace edgegan::cuda
