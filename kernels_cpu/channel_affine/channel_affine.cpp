#include "kernels_cpu/channel_affine/channel_affine.h"

#include <algorithm>

#include "kernels_cpu/common/half_convert.h"

namespace edgegan::cpu {

void channel_affine(int64_t pixels, int64_t channels, const float* scale, const float* shift,
                    const float* x, float* y, Activation activation, float alpha, float beta) {
  for (int64_t p = 0; p < pixels; ++p)
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t i = p * channels + c;
      y[i] = activate(x[i] * scale[c] + shift[c], activation, alpha, beta);
    }
}

bool channel_affine_halves(int64_t pixels, int64_t channels, const float* scale, const float* shift, const uint16_t* x, uint16_t* y,
                           Activation activation, float alpha, float beta) {
  // channel_affine on blocks of whole pixel rows (a row wider than a block in pieces of channels).
  constexpr int64_t kBlock = 4096;
  alignas(64) float block[kBlock];
  bool overflow = false;
  if (channels > kBlock) {
    for (int64_t p = 0; p < pixels; ++p)
      for (int64_t c0 = 0; c0 < channels; c0 += kBlock) {
        const int64_t m = std::min(kBlock, channels - c0), at = p * channels + c0;
        widen_halves(x + at, block, m);
        channel_affine(1, m, scale + c0, shift + c0, block, block, activation, alpha, beta);
        overflow = narrow_to_halves(block, y + at, m) || overflow;
      }
    return overflow;
  }
  const int64_t rows = kBlock / channels;
  for (int64_t p0 = 0; p0 < pixels; p0 += rows) {
    const int64_t n = std::min(rows, pixels - p0), values = n * channels;
    widen_halves(x + p0 * channels, block, values);
    channel_affine(n, channels, scale, shift, block, block, activation, alpha, beta);
    overflow = narrow_to_halves(block, y + p0 * channels, values) || overflow;
  }
  return overflow;
}

void channel_affine_backward(int64_t pixels, int64_t channels, const float* scale, const float* x, const float* dy, float* dx,
                             float* dscale, float* dshift) {
  for (int64_t p = 0; p < pixels; ++p)
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t i = p * channels + c;
      if (dscale) {
        dscale[c] += dy[i] * x[i];
        dshift[c] += dy[i];
      }
      if (dx) dx[i] += dy[i] * scale[c];
    }
}

}  // namespace edgegan::cpu
