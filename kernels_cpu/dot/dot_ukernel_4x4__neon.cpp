// AArch64 NEON narrow-output kernel (the RGB / grey heads, at most 4 output
// channels): 4 pixels x up to 4 channels = 16 q-register accumulators, each
// summing 4 reduction positions per step; one across-lane add (FADDP/FADDV) per
// output at the very end, after every tap. The last k % 4 positions of each tap
// are summed in scalar registers (NEON has no masked loads). Contract in
// gemm_ukernel.h.
#include <arm_neon.h>

#include "kernels_cpu/dot/dot_ukernel.h"

namespace edgegan::cpu {
namespace {

// Rows start row0 floats past each tap's pointer.
template <int MR, int NR>
void tile(int64_t k, int taps, const float* const* a, int64_t row0, int64_t lda, const float* const* bt, float* c, int64_t ldc) {
  float32x4_t acc[MR][NR];
  float tail[MR][NR] = {};
#pragma GCC unroll 4
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NR; ++j) acc[i][j] = vdupq_n_f32(0.f);
  const int64_t k4 = k - k % 4;
  for (int t = 0; t < taps; ++t) {
    const float* at = a[t] + row0;
    const float* b = bt[t];
    for (int64_t p = 0; p < k4; p += 4) {
      float32x4_t av[MR];
#pragma GCC unroll 4
      for (int i = 0; i < MR; ++i) av[i] = vld1q_f32(at + i * lda + p);
#pragma GCC unroll 4
      for (int j = 0; j < NR; ++j) {
        const float32x4_t bv = vld1q_f32(b + j * k + p);
#pragma GCC unroll 4
        for (int i = 0; i < MR; ++i) acc[i][j] = vfmaq_f32(acc[i][j], av[i], bv);
      }
    }
    for (int64_t p = k4; p < k; ++p)
      for (int i = 0; i < MR; ++i)
        for (int j = 0; j < NR; ++j) tail[i][j] += at[i * lda + p] * b[j * k + p];
  }
#pragma GCC unroll 4
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NR; ++j) c[i * ldc + j] += vaddvq_f32(acc[i][j]) + tail[i][j];
}

template <int MR>
void tile_nr(int64_t k, int taps, int nr, const float* const* a, int64_t row0, int64_t lda, const float* const* bt, float* c,
             int64_t ldc) {
  switch (nr) {
    case 1: return tile<MR, 1>(k, taps, a, row0, lda, bt, c, ldc);
    case 2: return tile<MR, 2>(k, taps, a, row0, lda, bt, c, ldc);
    case 3: return tile<MR, 3>(k, taps, a, row0, lda, bt, c, ldc);
    default: return tile<MR, 4>(k, taps, a, row0, lda, bt, c, ldc);
  }
}

}  // namespace

// All mr rows, four at a time: one call per run of consecutive pixels, not per tile.
void dot_ukernel_4x4__neon(int64_t k, int taps, int mr, int nr, const float* const* a, int64_t lda,
                           const float* const* bt, float* c, int64_t ldc) {
  int i0 = 0;
  for (; i0 + 4 <= mr; i0 += 4) tile_nr<4>(k, taps, nr, a, i0 * lda, lda, bt, c + i0 * ldc, ldc);
  switch (mr - i0) {
    case 1: return tile_nr<1>(k, taps, nr, a, i0 * lda, lda, bt, c + i0 * ldc, ldc);
    case 2: return tile_nr<2>(k, taps, nr, a, i0 * lda, lda, bt, c + i0 * ldc, ldc);
    case 3: return tile_nr<3>(k, taps, nr, a, i0 * lda, lda, bt, c + i0 * ldc, ldc);
    default: return;
  }
}

}  // namespace edgegan::cpu
