#include "kernels_common/transpose_matrix.h"

#include <algorithm>

namespace edgegan::kernels {

void transpose_matrix(int64_t rows, int64_t cols, const float* src, int64_t ld_src, float* dst, int64_t ld_dst) {
  // 16x16 floats: one cache line per row in and out. Leading dimensions are usually powers
  // of two, so a tile's rows share few L1 sets: 32 rows of 2 lines overflow them (measured
  // 2x slower on 256x512), 16 rows of one line fit.
  constexpr int64_t kTile = 16;
  for (int64_t i0 = 0; i0 < rows; i0 += kTile)
    for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
      const int64_t i1 = std::min(rows, i0 + kTile), j1 = std::min(cols, j0 + kTile);
      for (int64_t j = j0; j < j1; ++j)
        for (int64_t i = i0; i < i1; ++i) dst[j * ld_dst + i] = src[i * ld_src + j];
    }
}

}  // namespace edgegan::kernels
