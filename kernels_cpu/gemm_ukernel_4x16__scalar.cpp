// Portable micro-kernel: plain C++ the compiler may vectorise for the baseline
// target. It is the fallback on any CPU and the shape the NEON family follows.
#include "kernels_cpu/gemm_microkernel.h"

namespace edgegan::cpu {

void gemm_ukernel_4x16__scalar(int64_t k, int mr, int nr, const float* const* a, const float* b, int64_t ldb,
                               float* const* c) {
  constexpr int MR = 4, NR = 16;
  float acc[MR][NR] = {};
  for (int64_t p = 0; p < k; ++p) {
    const float* brow = b + p * ldb;
    for (int i = 0; i < mr; ++i) {
      const float av = a[i][p];
      for (int j = 0; j < nr; ++j) acc[i][j] += av * brow[j];
    }
  }
  for (int i = 0; i < mr; ++i)
    for (int j = 0; j < nr; ++j) c[i][j] += acc[i][j];
}

}  // namespace edgegan::cpu
