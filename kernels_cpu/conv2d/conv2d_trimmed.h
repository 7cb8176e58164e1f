// 2-D convolution, NHWC: y[N, out_h, out_w, Cout] = conv(x) + bias, then activation.
// Per block of output pixels and tap, one indirect GEMM over the pixels whose input
// pixel is inside the image (read in place); taps that would read padding are
// trimmed, never multiplied. With Cin < 16 (an image) the block gathers all taps per
// pixel instead (zeros at borders) so the GEMM is taps*Cin deep.
// Weights [kh][kw][Cin][Cout] (pack_conv2d_weights, conv2d_reference.h).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels_common/conv_geometry.h"
#include "kernels_cpu/common/conv_input_map.h"
#include "kernels_cpu/common/epilogue.h"

namespace edgegan::cpu {

// `workspace` holds conv2d_trimmed_workspace floats (nullptr: allocated per call):
// the few-channel path's gathered rows; 0 otherwise. With `map`, x is read through it
// (conv_input_map.h) and `shape` describes the map the convolution sees.
int64_t conv2d_trimmed_workspace(const ConvShape& shape, int threads);
void conv2d_trimmed(const ConvShape& shape, const float* packed_weights, const float* x, float* y, const Epilogue& epilogue,
                    int threads, float* workspace = nullptr, const ConvInputMap* map = nullptr);

// An fp16 session's route. Under 16 input channels, the gathered taps widened as they
// are gathered (an input map too); from 16, layers split in pixel blocks (not the
// few-pixel, wide-weight split) without an input map: each block's input rows widened
// once into the thread's scratch. Either runs the same GEMMs into a float block,
// finished (bias, activation; no residual) and narrowed, ties to even: the bits
// conv2d_trimmed gives on the widened x, rounded. Returns whether a finite output became
// infinite. workspace: conv2d_trimmed_halves_workspace floats.
// With half_weights (conv2d_trimmed_half_weights) at an ISA with half arithmetic
// (neonfp16arith), the 16+ channel GEMMs read x's halves in place and multiply them by
// the halves of the weights, summing in fp16 over 8 input channels and then in fp32
// (gemm_ukernel_8x8__neonfp16arith); an fp16 sum past the half range is reported as an
// overflow. Elsewhere half_weights is ignored.
bool conv2d_trimmed_halves_applies(const ConvShape& shape, bool mapped);
int64_t conv2d_trimmed_halves_workspace(const ConvShape& shape, int threads);
bool conv2d_trimmed_halves(const ConvShape& shape, const float* packed_weights, const uint16_t* x, uint16_t* y, const Epilogue& epilogue,
                           int threads, float* workspace, const ConvInputMap* map = nullptr, const uint16_t* half_weights = nullptr);
// The weights as halves for the half-arithmetic GEMMs, once per layer: empty where the
// active ISA has none, under 16 input channels (the gathered taps stay fp32 arithmetic)
// or where a weight is past the half range.
std::vector<uint16_t> conv2d_trimmed_half_weights(const ConvShape& shape, const float* packed_weights);

}  // namespace edgegan::cpu
