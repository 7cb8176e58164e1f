#include "kernels_cpu/channel_affine/channel_affine.h"

namespace edgegan::cpu {

void channel_affine(int64_t pixels, int64_t channels, const float* scale, const float* shift,
                    const float* x, float* y, Activation activation, float alpha, float beta) {
  for (int64_t p = 0; p < pixels; ++p)
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t i = p * channels + c;
      y[i] = activate(x[i] * scale[c] + shift[c], activation, alpha, beta);
    }
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
