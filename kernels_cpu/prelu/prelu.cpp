#include "kernels_cpu/prelu/prelu.h"

#include <algorithm>

#include "kernels_cpu/activation/activation_functors.h"
#include "kernels_cpu/common/half_convert.h"
#include "kernels_cpu/common/simd_clones.h"

namespace edgegan::cpu {

namespace {
constexpr int64_t kMinParallelElements = 1 << 14;

// One pixel row (or a run of single-slope values), through prelu_select: a vector blend.
// Written as `x > 0 ? x : s * x` with the product inside the branch, GCC kept it scalar
// and branchy: 4.9 ms for a 128x128x64 map whose signs are mixed, 0.55 ms for one that
// is mostly positive.
// In place (y == x) is fine: each value is read before it is written.
EDGEGAN_SIMD_CLONES void prelu_row(int64_t n, const float* slope, const float* x, float* y) {
EDGEGAN_NO_ALIAS_LOOP
  for (int64_t c = 0; c < n; ++c) y[c] = prelu_select(x[c], slope[c]);
}
EDGEGAN_SIMD_CLONES void prelu_run(int64_t n, float slope, const float* x, float* y) {
EDGEGAN_NO_ALIAS_LOOP
  for (int64_t i = 0; i < n; ++i) y[i] = prelu_select(x[i], slope);
}
}  // namespace

void prelu_reference(int64_t pixels, int64_t channels, const float* slope, const float* x, float* y) {
  for (int64_t p = 0; p < pixels; ++p)
    for (int64_t c = 0; c < channels; ++c) {
      const float v = x[p * channels + c];
      y[p * channels + c] = v > 0.f ? v : slope[c] * v;
    }
}

void prelu(int64_t pixels, int64_t channels, const float* slope, const float* x, float* y, int threads) {
  if (channels == 1) {  // one slope: one long loop, in chunks over threads
    const float s = slope[0];
    const int64_t chunks = (pixels + 4095) / 4096;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && pixels >= kMinParallelElements)
    for (int64_t k = 0; k < chunks; ++k) {
      const int64_t end = k * 4096 + 4096 < pixels ? k * 4096 + 4096 : pixels;
      prelu_run(end - k * 4096, s, x + k * 4096, y + k * 4096);
    }
    return;
  }
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && pixels * channels >= kMinParallelElements)
  for (int64_t p = 0; p < pixels; ++p) prelu_row(channels, slope, x + p * channels, y + p * channels);
}

bool prelu_halves(int64_t pixels, int64_t channels, const float* slope, const uint16_t* x, uint16_t* y, int threads) {
  // prelu's calls on a per-task block of widened floats: one slope in its chunks of 4096
  // values; else blocks of whole pixel rows of about as many values, a row wider than
  // that in pieces of channels.
  constexpr int64_t kBlock = 4096;
  const int64_t piece = std::min(channels, kBlock), pieces = (channels + piece - 1) / piece;
  const int64_t rows = channels == 1 ? kBlock : std::max<int64_t>(1, kBlock / channels);
  const int64_t tasks = (pixels + rows - 1) / rows;
  bool overflow = false;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && pixels * channels >= kMinParallelElements) reduction(|| : overflow)
  for (int64_t t = 0; t < tasks; ++t) {
    alignas(64) float block[kBlock];
    const int64_t p0 = t * rows, n = std::min(rows, pixels - p0);
    if (channels == 1 || pieces == 1) {
      const int64_t values = n * channels;
      widen_halves(x + p0 * channels, block, values);
      if (channels == 1) prelu_run(values, slope[0], block, block);
      else for (int64_t p = 0; p < n; ++p) prelu_row(channels, slope, block + p * channels, block + p * channels);
      overflow = narrow_to_halves(block, y + p0 * channels, values) || overflow;
      continue;
    }
    for (int64_t c0 = 0; c0 < channels; c0 += piece) {  // one pixel (rows = 1), piece by piece
      const int64_t m = std::min(piece, channels - c0), at = p0 * channels + c0;
      widen_halves(x + at, block, m);
      prelu_row(m, slope + c0, block, block);
      overflow = narrow_to_halves(block, y + at, m) || overflow;
    }
  }
  return overflow;
}

void prelu_backward(int64_t pixels, int64_t channels, const float* slope, const float* x, const float* dy, float* dx, bool accumulate,
                    float* dslope, int threads) {
  if (dx) {
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && pixels * channels >= kMinParallelElements)
    for (int64_t p = 0; p < pixels; ++p) {
      const float* xp = x + p * channels;
      const float* gp = dy + p * channels;
      float* dp = dx + p * channels;
      if (accumulate) {
        for (int64_t c = 0; c < channels; ++c) dp[c] += xp[c] > 0.f ? gp[c] : gp[c] * slope[c];
      } else {
        for (int64_t c = 0; c < channels; ++c) dp[c] = xp[c] > 0.f ? gp[c] : gp[c] * slope[c];
      }
    }
  }
  if (!dslope) return;
  if (channels == 1) {
    float sum = 0.f;
    for (int64_t i = 0; i < pixels; ++i) sum += x[i] > 0.f ? 0.f : dy[i] * x[i];
    dslope[0] += sum;
    return;
  }
  // One pass in pixel order, vectorised over channels: each slope's sum has a fixed order.
  for (int64_t p = 0; p < pixels; ++p) {
    const float* xp = x + p * channels;
    const float* gp = dy + p * channels;
    for (int64_t c = 0; c < channels; ++c) dslope[c] += xp[c] > 0.f ? 0.f : gp[c] * xp[c];
  }
}

}  // namespace edgegan::cpu
