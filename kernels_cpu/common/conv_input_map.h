// A convolution that reads its input through per-axis index tables: a reflect, edge
// or wrap Pad, or a nearest Resize, in front of the convolution folded into where it
// reads instead of materialised. The convolution's ConvShape describes the map it sees
// (h.in x w.in, the "logical" input); logical pixel (r, c) of image n is physical pixel
// (rows[r], cols[c]) of x [N][src_h][src_w][C]. Every table entry is a valid physical
// index (a zero border stays in the convolution's own pads, where taps are trimmed).
#pragma once

#include <cstdint>

namespace edgegan::cpu {

struct ConvInputMap {
  const int32_t* rows = nullptr;  // [h.in]
  const int32_t* cols = nullptr;  // [w.in]
  int64_t src_h = 0, src_w = 0;
};

// Where logical pixel (ih, iw) of image n starts in x: through `map`, or x's own
// [N][in_h][in_w][C] layout when map is null.
inline const float* conv_input_pixel(const float* x, const ConvInputMap* map, int64_t in_h, int64_t in_w, int64_t channels, int64_t n,
                                     int64_t ih, int64_t iw) {
  if (map) return x + ((n * map->src_h + map->rows[ih]) * map->src_w + map->cols[iw]) * channels;
  return x + ((n * in_h + ih) * in_w + iw) * channels;
}

}  // namespace edgegan::cpu
