// Sliding-channel convolution (DSXplore's SCC) on the GPU, NHWC
// (kernels_cpu/sliding_channel_conv/sliding_channel_conv.h defines it): output channel o
// reads the `window` input channels (starts[o mod period] + j) mod Cin, j < window,
// through a kh x kw kernel. One thread per output element reads its window in place
// (no channel stack), wrapping at Cin; weights as the file stores them,
// [Cout][kh][kw][window]; bias and activation in the epilogue.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels_common/conv_geometry.h"
#include "kernels_cuda/common/activation.h"

namespace edgegan::cuda {

// starts: one period of window starts in device memory (each in [0, Cin)); bias may be null.
void sliding_channel_conv(const kernels::ConvShape& shape, int window, int period, const int* starts, const float* weights, const float* bias,
                          ActivationParams activation, const float* x, float* y, cudaStream_t stream);

}  // namespace edgegan::cuda
