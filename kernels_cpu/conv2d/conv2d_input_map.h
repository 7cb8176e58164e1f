// The training side of a convolution that reads its input through index tables
// (conv_input_map.h): the backward runs on the map the convolution saw, gathered once
// into scratch, and folds the map's gradient back onto the input it was read from.
#pragma once

#include <cstdint>

#include "kernels_cpu/common/conv_input_map.h"
#include "kernels_common/conv_input_map_table.h"

namespace edgegan::cpu {

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
