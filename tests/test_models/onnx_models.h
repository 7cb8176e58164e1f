// ONNX models built in C++ (random weights, fixed seeds), so tests and benchmarks
// need no PyTorch: the HUGE² paper's benchmark generators, the DCGAN-64 of
// pytorch/examples, and small graphs that cover particular ops.
//   DCGAN: 4x4x1024 -> 8x8x512 -> 16x16x256 -> 32x32x128 -> 64x64x3, k5 s2 p2 op1
//   cGAN:  8x8x256 -> 16x16x128 -> 32x32x3, k4 s2 p1
#pragma once

#include <string>

namespace edgegan::testing {

std::string huge2_dcgan_onnx();
std::string huge2_cgan_onnx();

// The DCGAN-64 of pytorch/examples (nz=100, ngf=ndf=64, 64x64x3, BatchNorm in eval
// mode, D ending in one logit per sample) with random weights: what a training step
// is measured and tested on.
std::string dcgan64_generator_onnx();
std::string dcgan64_discriminator_onnx();

// A conv whose BatchNorm cannot fold (its output is also a graph output): covers
// ChannelAffine, a standalone activation and two outputs.
std::string two_outputs_onnx();

// Two 3x3 stride-1 convolutions 16 -> 24 -> 16 on 20x20 (the second reads through a
// fused reflect pad and takes a residual): at batch 4 they run in the Winograd form,
// at batch 1 (25 windows) on the direct path.
std::string winograd_block_onnx();
// A 3x3 convolution 148 -> 148 channels on 16x16 maps: transformed filters over 3 MiB,
// which a session makes in every run instead of keeping (at batch 16: 256 windows).
std::string winograd_wide_onnx();
// A k4 s2 transposed convolution 128 -> 120 channels, 16x16 -> 32x32: transformed
// filters over 2 MiB, made in every run where a batch has 1024 windows (batch 16).
std::string winograd_transposed_wide_onnx();
// Twelve 3x3 convolutions 141 -> 141 channels on 32x32 maps: each layer's kept Winograd
// filters take 2.7 MiB, twelve of them more than a session's 32 MiB budget.
std::string winograd_budget_onnx();

}  // namespace edgegan::testing
