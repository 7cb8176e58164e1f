// The training side of a convolution that reads its input through index tables
// (conv_input_map.h): the backward runs on the map the convolution saw, gathered once
// into scratch, and folds the map's gradient back onto the input it was read from.
#pragma once

#include <cstdint>

#include "kernels_cpu/common/conv_input_map.h"
#include "kernels_cpu/pad/pad.h"

namespace edgegan::cpu {

// One axis of a fused input map: the input upsampled by `factor` (nearest: index o
// reads o / factor), then padded in the map's PadMode (kReflect, kEdge or kWrap; with
// kConstant both pads must be 0).
struct InputMapAxis {
  int64_t factor = 1, pad_begin = 0, pad_end = 0;
  int64_t length(int64_t input) const { return input * factor + pad_begin + pad_end; }
};
// table[o] for o < axis.length(input): the input index logical index o reads.
void conv_input_map_table(int64_t input, const InputMapAxis& axis, PadMode mode, int32_t* table);

// out [N][h][w][C] = x [N][src_h][src_w][C] read through `map` (tables of h rows, w columns).
void conv_input_map_gather(int64_t batch, int64_t h, int64_t w, int64_t channels, const ConvInputMap& map, const float* x, float* out,
                           int threads);

// dx[n][map.rows[r]][map.cols[c]] += d_map[n][r][c] over every (r, c): the gradient of
// the gather. dx is overwritten unless `accumulate`. Each physical row is owned by one
// thread, which adds its readers in ascending (r, c) order: the result does not depend
// on the thread count.
void conv_input_map_fold(int64_t batch, int64_t h, int64_t w, int64_t channels, const ConvInputMap& map, const float* d_map, float* dx,
                         bool accumulate, int threads);

}  // namespace edgegan::cpu
