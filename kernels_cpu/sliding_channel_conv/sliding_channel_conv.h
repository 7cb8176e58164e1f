// Sliding-channel convolution (SCC), NHWC. Output channel o reads the `window` (gw)
// input channels (start(o) + j) mod Cin, j < gw, through a kh x kw kernel:
//   y[n][oh][ow][o] = act(bias[o] + sum_{tap, j} w[o][tap][j] * x[n][ih(tap)][iw(tap)][(start(o) + j) mod Cin])
// with start(o) = o * start_stride mod Cin. The starts repeat with the period
// P = Cin / gcd(Cin, start_stride) (the "cyclic distance"); the plan keeps one period.
// ONNX-layout weights (a grouped Conv with groups = Cout over the channel stack) are
// [Cout][gw][kh][kw]; the packed ones the fast kernels read are [Cout][kh][kw][gw].
//
//   forward: output-centric. Per tile of kTile output pixels of one row, the taps'
//     input pixels are transposed into a channel-major tile [tap][Cin + gw][kTile]
//     whose rows Cin.. repeat rows 0.. (so a wrapping window is contiguous); each
//     output channel then reads its window in place, vectorised over the tile's
//     pixels. No channel stack: the scratch is per thread, kh*kw*(Cin+gw)*kTile floats.
//     Parallel over tiles (batch x rows x row segments).
//   backward dX: input-centric. Per tile of 32 input pixels of a row, dY of the output
//     pixels each tap reaches is transposed into [tap][Cout][32]; each input channel c
//     gathers from the outputs whose windows cover it (the plan's cover list: one period's
//     (p, j) pairs, outputs o = p, p + P, ...), the list walked once for a group of 8
//     tiles. Every dX value is written once, summed in a fixed order: no atomics.
//   backward dW: parallel over blocks of 16 output channels; each block sums every pixel
//     in one fixed order, 32 pixels at a time (their input rows copied, extended by gw
//     channels so no window wraps; each dW row held in registers across them; vectorised
//     along the window), so dW does not depend on the thread count. db: bias_backward.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels_common/conv_geometry.h"
#include "kernels_cpu/common/epilogue.h"

namespace edgegan::cpu {

// The period of the window starts: min(Cout, Cin / gcd(Cin, start_stride mod Cin)).
int64_t sliding_channel_conv_period(int64_t in_channels, int64_t out_channels, int64_t start_stride);
// One period of starts: p * start_stride mod Cin.
std::vector<int32_t> sliding_channel_conv_starts(int64_t in_channels, int64_t out_channels, int64_t start_stride);

// Windows and their inverse, made once per op (the kernels allocate nothing).
struct SlidingChannelPlan {
  ConvShape shape;          // in_channels, out_channels, spatial geometry (batch: the planned one)
  int64_t window = 1;       // gw
  std::vector<int32_t> starts;  // one period
  // cover[c]: the (p, j) with (starts[p] + j) mod Cin == c, p < period, in CSR form.
  std::vector<int32_t> cover_offsets, cover_p, cover_j;
  int64_t period() const { return static_cast<int64_t>(starts.size()); }
  int64_t start(int64_t o) const { return starts[static_cast<size_t>(o % period())]; }
};
SlidingChannelPlan plan_sliding_channel_conv(const ConvShape& shape, int64_t window, std::vector<int32_t> starts);

// Plain loops (ONNX-layout weights [Cout][gw][kh][kw]); shape.batch images.
void sliding_channel_conv_reference(const SlidingChannelPlan& plan, const float* x, const float* onnx_weights, float* y,
                                    const Epilogue& epilogue);
// dY given (no activation); any output may be null; all overwritten.
void sliding_channel_conv_backward_reference(const SlidingChannelPlan& plan, const float* x, const float* onnx_weights,
                                             const float* dy, float* dx, float* d_onnx_weights, float* dbias);
// [Cout][gw][kh][kw] -> [Cout][kh][kw][gw] (and back).
void pack_sliding_channel_conv_weights(const SlidingChannelPlan& plan, const float* onnx_weights, float* packed);
void unpack_sliding_channel_conv_weights(const SlidingChannelPlan& plan, const float* packed, float* onnx_weights);

// Floats of scratch, for `threads` threads.
int64_t sliding_channel_conv_workspace(const SlidingChannelPlan& plan, int threads);
int64_t sliding_channel_conv_backward_workspace(const SlidingChannelPlan& plan, int threads);

// `batch` images (plan.shape.batch is ignored here); workspace: sliding_channel_conv_workspace floats.
void sliding_channel_conv(const SlidingChannelPlan& plan, int64_t batch, const float* packed_weights, const float* x, float* y,
                          const Epilogue& epilogue, int threads, float* workspace);
// dX overwritten; workspace: sliding_channel_conv_backward_workspace floats.
void sliding_channel_conv_backward_input(const SlidingChannelPlan& plan, int64_t batch, const float* packed_weights, const float* dy,
                                         float* dx, int threads, float* workspace);
// dW [Cout][kh][kw][gw] overwritten; workspace: sliding_channel_conv_backward_workspace floats (dX and dW may share it,
// one after the other).
void sliding_channel_conv_backward_weights(const SlidingChannelPlan& plan, int64_t batch, const float* x, const float* dy,
                                           float* d_packed_weights, int threads, float* workspace);

}  // namespace edgegan::cpu
