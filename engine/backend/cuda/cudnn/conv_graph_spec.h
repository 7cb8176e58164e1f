// What the cuDNN path builds for one convolution layer, worked out from the model
// alone (no device, no cuDNN): one forward convolution for a Conv2D, one per phase with
// outputs for a split ConvTranspose2D, each with its channel counts padded (fp16: to
// multiples of 8, RGB in and out included), its input window and pads, where its
// outputs land in the layer's output (a phase writes every stride-th row and column),
// and the pointwise epilogue fused after it (bias, activation, residual).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/ops/op_def.h"
#include "kernels_common/conv_filter_repack.h"

namespace edgegan::cuda::cudnn {

// The activations a graph fuses as pointwise nodes (the schema's, by name).
enum class Pointwise { kNone, kRelu, kLeakyRelu, kTanh, kSigmoid, kElu, kSelu, kClip, kHardSigmoid, kHardSwish, kSoftplus, kMish, kPRelu };

struct ConvGraphSpec {
  Precision precision = Precision::kFp32;
  int64_t batch = 1;
  // The input window read (NHWC, pixels of the whole input apart as in_h_stride /
  // in_w_stride say) and the layer's channel counts, real and padded.
  int64_t in_h = 0, in_w = 0;
  int64_t in_offset_pixels = 0;          // the window's first pixel in the input image
  int64_t in_image_pixels = 0, in_row_pixels = 0;
  int64_t in_channels = 0, out_channels = 0;
  int64_t in_channels_padded = 0, out_channels_padded = 0;
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  // The outputs: out_h x out_w of them, the first at out_offset_pixels of the output
  // image, rows out_row_step image rows apart and columns out_col_step apart.
  int64_t out_h = 0, out_w = 0;
  int64_t out_offset_pixels = 0, out_image_pixels = 0, out_row_pixels = 0;
  int64_t out_row_step = 1, out_col_step = 1;
  bool bias = false;
  Pointwise activation = Pointwise::kNone;
  float alpha = 0, beta = 0;
  bool residual = false;
  // The filter as stored (the repack source) and the stored buffer it comes from.
  kernels::FilterSource filter;
  uint32_t filter_buffer = 0;
  std::string describe() const;  // "conv 3x3 s1 64->64 (pad 64->64) 128x128 b8 fp16 bias relu"
};

struct ConvGraphLayer {
  std::vector<ConvGraphSpec> convs;  // one, or one per phase with outputs
  std::string refusal;               // non-empty: the cuDNN path does not serve this layer, and why
};

// The graphs of a Conv2D or ConvTranspose2D op at `args`' batch and precision; for any
// other kind, or a form left to the project's kernels (grouped, a fused input map,
// phases that are no correlation), `refusal` says why.
ConvGraphLayer conv_graph_layer(const KernelArgs& args);

// Channels rounded up as the precision's tensor-core engines need (fp16: 8; else 1).
int64_t padded_channels(int64_t channels, Precision precision);

}  // namespace edgegan::cuda::cudnn
