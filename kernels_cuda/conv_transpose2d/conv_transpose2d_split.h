// CUDA twin of kernels_cpu/conv_transpose.h: the split transposed convolution.
//
// First operator of the CUDA backend. One thread per output element: the thread
// derives its phase from its output position, walks only that phase's taps that
// land inside the input (trimming), and writes its own output element, so KS-deconv
// stages 2 and 3 are fused, nothing is zero-inserted, and there are no atomics
// (results are deterministic). Shared-memory tiling, split-K and the rest of the
// backend are the CUDA issue's work.
#pragma once

#include <string>

#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"
#include "kernels_cpu/common/epilogue.h"

namespace edgegan::cuda {

// True when a CUDA device can be used; otherwise `why` says what is missing.
bool device_available(std::string* why);

// Host-to-host convenience used by the tests: uploads x and the split weights,
// runs the kernel, downloads y. Throws std::runtime_error with the CUDA error.
void conv_transpose2d_split_host(const cpu::ConvShape& shape, const cpu::ConvTranspose2DWeights& weights, const float* x,
                                 float* y, const cpu::Epilogue& epilogue);

}  // namespace edgegan::cuda
