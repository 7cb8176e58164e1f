#include "kernels_cpu/conv2d/conv2d_input_map.h"

#include <algorithm>
#include <cstring>

namespace edgegan::cpu {

void conv_input_map_gather(int64_t batch, int64_t h, int64_t w, int64_t channels, const ConvInputMap& map, const float* x, float* out,
                           int threads) {
  const size_t bytes = static_cast<size_t>(channels) * sizeof(float);
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int64_t row = 0; row < batch * h; ++row) {
    const int64_t n = row / h, r = row % h;
    const float* src = x + (n * map.src_h + map.rows[r]) * map.src_w * channels;
    float* dst = out + row * w * channels;
    for (int64_t c = 0; c < w; ++c) std::memcpy(dst + c * channels, src + map.cols[c] * channels, bytes);
  }
}

void conv_input_map_fold(int64_t batch, int64_t h, int64_t w, int64_t channels, const ConvInputMap& map, const float* d_map, float* dx,
                         bool accumulate, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int64_t prow = 0; prow < batch * map.src_h; ++prow) {
    const int64_t n = prow / map.src_h, pr = prow % map.src_h;
    float* dst = dx + prow * map.src_w * channels;
    if (!accumulate) std::fill(dst, dst + map.src_w * channels, 0.f);
    for (int64_t r = 0; r < h; ++r) {
      if (map.rows[r] != pr) continue;
      const float* src = d_map + (n * h + r) * w * channels;
      for (int64_t c = 0; c < w; ++c) {
        float* __restrict d = dst + map.cols[c] * channels;
        const float* __restrict s = src + c * channels;
        for (int64_t k = 0; k < channels; ++k) d[k] += s[k];
      }
    }
  }
}

}  // namespace edgegan::cpu
