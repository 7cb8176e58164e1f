// 2-D convolution from a few input channels (1-4) to many outputs (8-64), stride 1,
// large kernels on large maps: ESPCN's 5x5 1 -> 64 first layer, a fast-style network's
// 9x9 3 -> 8 one (its reflect pad fused as an input map). A GEMM over Cin*k*k = 25-243
// deep rows keeps too little in registers per loaded input, and the per-tap GEMMs of
// conv2d_trimmed are 1-3 deep. Here the vector lanes hold consecutive output pixels of
// one row instead, on the phase-lanes micro-kernels (phase_lanes_ukernel.h, a stride-1
// correlation is their one-phase case with the kernel's columns reversed):
//   1. each input row is transposed once, when first needed, into per-channel planes
//      with zero columns around them (the fused input map applied there), a ring of kh
//      rows per thread; rows outside the map are skipped;
//   2. a task is one output row: per pass of up to 16 output channels, each block of
//      positions sums every channel in registers from shifted plane vectors and one
//      broadcast weight each; the sums go to their pixels, then bias, activation and
//      residual over the whole row.
// Weights [kh][kw][Cin][Cout] (pack_conv2d_weights), repacked per call into the
// workspace in the micro-kernel's order (a few thousand floats).
#pragma once

#include "kernels_cpu/common/conv_geometry.h"
#include "kernels_cpu/common/conv_input_map.h"
#include "kernels_cpu/common/epilogue.h"

namespace edgegan::cpu {

// Groups 1, stride 1, dilation 1, 1-4 input channels, at least 8 output channels (at
// most 32 outside AVX-512), kernels of 3 to 9 taps per axis, rows of 16 pixels or more:
// where it measured ahead of conv2d_trimmed.
bool conv2d_thin_input_applies(const ConvShape& shape, int64_t groups);

// Scratch floats: the repacked weights, then each thread's ring of planes.
int64_t conv2d_thin_input_workspace(const ConvShape& shape, int threads);

// y = epilogue(conv(x)); x read through `map` when given (shape describes the map). Each
// output row is summed by one thread in a fixed order: the same bits at any thread count.
// `workspace` holds conv2d_thin_input_workspace(shape, threads) floats (contents ignored).
void conv2d_thin_input(const ConvShape& shape, const float* packed_weights, const float* x, float* y, const Epilogue& epilogue, int threads,
                       float* workspace, const ConvInputMap* map = nullptr);

}  // namespace edgegan::cpu
