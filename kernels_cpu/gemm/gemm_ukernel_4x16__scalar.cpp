// Portable micro-kernel: plain C++ the compiler may vectorise for the baseline
// target. It is the fallback on any CPU and the shape the NEON family follows.
// fp16 weights are widened one B row at a time (half.h).
#include "kernels_cpu/gemm/gemm_ukernel.h"
#include "kernels_cpu/common/half.h"

namespace edgegan::cpu {
namespace {

constexpr int MR = 4, NR = 16;

inline const float* b_row(const float* b, int nr, float* /*staged*/) { (void)nr; return b; }
inline const float* b_row(const uint16_t* b, int nr, float* staged) {
  for (int j = 0; j < nr; ++j) staged[j] = half_to_float(b[j]);
  return staged;
}

template <typename BT>
void kernel(int64_t k, int mr, int nr, const float* const* a, const BT* b, int64_t ldb, float* const* c) {
  float acc[MR][NR] = {};
  float staged[NR];
  for (int64_t p = 0; p < k; ++p) {
    const float* brow = b_row(b + p * ldb, nr, staged);
    for (int i = 0; i < mr; ++i) {
      const float av = a[i][p];
      for (int j = 0; j < nr; ++j) acc[i][j] += av * brow[j];
    }
  }
  for (int i = 0; i < mr; ++i)
    for (int j = 0; j < nr; ++j) c[i][j] += acc[i][j];
}

}  // namespace

void gemm_ukernel_4x16__scalar(int64_t k, int mr, int nr, const float* const* a, const float* b, int64_t ldb,
                               float* const* c) {
  kernel(k, mr, nr, a, b, ldb, c);
}

void gemm_ukernel_4x16__scalar_f16w(int64_t k, int mr, int nr, const float* const* a, const uint16_t* b, int64_t ldb,
                                    float* const* c) {
  kernel(k, mr, nr, a, b, ldb, c);
}

}  // namespace edgegan::cpu
