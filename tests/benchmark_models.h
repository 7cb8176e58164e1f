// ONNX generators with the HUGE² paper's benchmark layer shapes (random
// weights, fixed seed), built in C++ so tests and benchmarks need no PyTorch.
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

}  // namespace edgegan::testing
