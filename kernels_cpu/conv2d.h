// 2-D convolution, NHWC: y[N, out_h, out_w, Cout] = conv(x) + bias, then activation.
//   reference — direct loop over ONNX-layout weights [Cout][Cin][kh][kw].
//   trimmed   — per block of output pixels and tap, one indirect GEMM over the pixels
//               whose input pixel is inside the image (read in place); taps that would
//               read padding are trimmed, never multiplied. With Cin < 16 (an image) the
//               block gathers all taps per pixel instead (zeros at borders) so the GEMM
//               is taps*Cin deep. Weights [kh][kw][Cin][Cout].
#pragma once

#include <cstdint>

#include "kernels_cpu/epilogue.h"

namespace edgegan::cpu {

struct ConvAxis {
  int64_t in = 0, kernel = 1, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0, out = 0;
};

// floor((in + pad_begin + pad_end - dilation*(kernel-1) - 1) / stride) + 1
int64_t conv_output_length(int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                           int64_t pad_begin, int64_t pad_end);

// Number of (output position, kernel tap) pairs of one axis that read inside the
// input: what the trimmed convolution multiplies (per channel pair).
uint64_t conv_useful_pairs(const ConvAxis& axis);

struct ConvShape {
  int64_t batch = 1, in_channels = 0, out_channels = 0;
  ConvAxis h, w;
};

void conv2d_reference(const ConvShape& shape, const float* x, const float* onnx_weights, float* y,
                      const Epilogue& epilogue);

// ONNX [Cout][Cin][kh][kw] -> [kh][kw][Cin][Cout] (done by the converter).
void pack_conv2d_weights(const ConvShape& shape, const float* onnx_weights, float* packed);

void conv2d_trimmed(const ConvShape& shape, const float* packed_weights, const float* x, float* y,
                    const Epilogue& epilogue, int threads);

}  // namespace edgegan::cpu
