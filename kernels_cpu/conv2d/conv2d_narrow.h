// 2-D convolution to at most 4 output channels (the RGB / grey head of an image
// generator: CycleGAN's 7x7x64->3, the fast-style network's 9x9x32->3), NHWC, on the
// dot micro-kernels (dot_ukernel.h). A GEMM tile is 32 output channels wide, so such a
// head ran at a tenth of the machine's rate on the per-tap GEMMs (10.7 GFLOP/s for the
// 9x9 head at 512x512); here the reduction is vectorised instead: per output row, each
// kernel row's kw*Cin taps are contiguous in a padded copy of the input row, so one
// dot micro-kernel call covers the whole output row.
// Each thread keeps a ring of padded input rows (zeros in the convolution's pads, the
// fused input map applied), filled once per input row of its band of output rows.
// Weights [kh][kw][Cin][Cout] (pack_conv2d_weights) as for conv2d_trimmed.
#pragma once

#include "kernels_common/conv_geometry.h"
#include "kernels_cpu/common/conv_input_map.h"
#include "kernels_cpu/common/epilogue.h"

namespace edgegan::cpu {

// Groups = 1, Cout <= 4, unit width dilation, kw*Cin deep enough for the dot kernels,
// a ring small enough for the cache, and an active ISA family with dot kernels.
bool conv2d_narrow_applies(const ConvShape& shape, int64_t groups);

// Scratch floats: the weights transposed per kernel row to [Cout][kw*Cin], then each
// thread's ring of padded input rows.
int64_t conv2d_narrow_workspace(const ConvShape& shape, int threads);

// y = epilogue(conv(x)); x read through `map` when given (shape describes the map).
// Each output row is summed by one thread in a fixed order: the same bits at any
// thread count.
void conv2d_narrow(const ConvShape& shape, const float* packed_weights, const float* x, float* y, const Epilogue& epilogue, int threads,
                   float* workspace, const ConvInputMap* map = nullptr);

}  // namespace edgegan::cpu
