#include "kernels_common/conv_geometry.h"

#include <algorithm>

namespace edgegan::kernels {

int64_t conv_output_length(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_begin, int64_t pad_end) {
  const int64_t span = in + pad_begin + pad_end - dilation * (kernel - 1) - 1;
  return span < 0 ? 0 : span / stride + 1;
}

int64_t conv_transpose_output_length(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_begin,
                                     int64_t pad_end, int64_t output_padding) {
  return (in - 1) * stride - pad_begin - pad_end + dilation * (kernel - 1) + output_padding + 1;
}

uint64_t count_tap_pairs(int64_t positions, int64_t stride, int64_t pad_begin, int64_t kernel, int64_t dilation,
                         int64_t target_length) {
  uint64_t pairs = 0;
  for (int64_t tap = 0; tap < kernel; ++tap) {
    // positions p with 0 <= p*stride + shift < target_length
    const int64_t shift = tap * dilation - pad_begin;
    const int64_t lo = std::max<int64_t>(0, floor_div(-shift + stride - 1, stride));
    const int64_t hi = std::min<int64_t>(positions, floor_div(target_length - 1 - shift, stride) + 1);
    if (hi > lo) pairs += static_cast<uint64_t>(hi - lo);
  }
  return pairs;
}

}  // namespace edgegan::kernels
