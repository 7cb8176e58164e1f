// Thin 2-D convolutions, stride 1, kernels 3-9, on large maps: from a few input channels
// (1-4) to many outputs (ESPCN's 5x5 1 -> 64 first layer, a fast-style network's 9x9
// 3 -> 8 one, its reflect pad fused as an input map), or to 8-16 outputs from up to 64
// (ESPCN's 3x3 32 -> 9 last layer, FSRCNN's 12 -> 12 mapping layers). The per-tap GEMMs
// of conv2d_trimmed are 1-3 deep for the first kind and half a register tile wide for
// the second. Here the vector lanes hold consecutive output pixels of
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

#include "kernels_common/conv_geometry.h"
#include "kernels_cpu/common/conv_input_map.h"
#include "kernels_cpu/common/epilogue.h"

namespace edgegan::cpu {

// Groups 1, stride 1, dilation 1, kernels of 3 to 9 taps per axis, rows of 16 pixels or
// more; 1-4 input channels to at least 8 outputs (at most 32 outside AVX-512), or up to
// 64 inputs to 8-16 outputs: where it measured ahead of conv2d_trimmed.
bool conv2d_thin_applies(const ConvShape& shape, int64_t groups);

// Scratch floats: the repacked weights, then each thread's ring of planes (and, for
// conv2d_thin_halves, each thread's output row and input row in floats).
int64_t conv2d_thin_workspace(const ConvShape& shape, int threads, bool halves = false);

// y = epilogue(conv(x)); x read through `map` when given (shape describes the map). Each
// output row is summed by one thread in a fixed order: the same bits at any thread count.
// `workspace` holds conv2d_thin_workspace(shape, threads) floats (contents ignored).
void conv2d_thin(const ConvShape& shape, const float* packed_weights, const float* x, float* y, const Epilogue& epilogue, int threads,
                       float* workspace, const ConvInputMap* map = nullptr);

// An fp16 session's route: x and y halves. Each input row is widened into the planes,
// each output row summed as above in floats, finished (bias, activation) and narrowed,
// ties to even: the bits conv2d_thin gives on the widened x, rounded. The epilogue has
// no residual (the caller's adapter handles one). Returns whether a finite output became
// infinite (past the half range). workspace: conv2d_thin_workspace(shape, threads, true).
bool conv2d_thin_halves(const ConvShape& shape, const float* packed_weights, const uint16_t* x, uint16_t* y, const Epilogue& epilogue,
                        int threads, float* workspace, const ConvInputMap* map = nullptr);

}  // namespace edgegan::cpu
