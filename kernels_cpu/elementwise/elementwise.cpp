#include "kernels_cpu/elementwise/elementwise.h"

#include <algorithm>
#include <cstring>

#include "kernels_cpu/common/half_convert.h"

namespace edgegan::cpu {

// Blocks that stay in L2 between the copy and the in-place pass; a switch per element
// (the scalar definition) ran a U-Net's 2M-float ReLU at 5 ns per value.
constexpr int64_t kBlock = 16384;

void elementwise_activation(int64_t count, const float* x, float* y, Activation activation, float alpha, float beta, int threads) {
  const int64_t blocks = (count + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && blocks > 1)
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t begin = b * kBlock, n = std::min(kBlock, count - begin);
    if (x != y) std::memcpy(y + begin, x + begin, static_cast<size_t>(n) * sizeof(float));
    apply_activation(y + begin, 1, n, n, activation, alpha, beta);
  }
}

bool elementwise_activation_halves(int64_t count, const uint16_t* x, uint16_t* y, Activation activation, float alpha, float beta, int threads) {
  // The same blocks, widened into a per-thread block of floats (64 KiB on its stack).
  const int64_t blocks = (count + kBlock - 1) / kBlock;
  bool overflow = false;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && blocks > 1) reduction(|| : overflow)
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t begin = b * kBlock, n = std::min(kBlock, count - begin);
    alignas(64) float block[kBlock];
    widen_halves(x + begin, block, n);
    apply_activation(block, 1, n, n, activation, alpha, beta);
    overflow = narrow_to_halves(block, y + begin, n) || overflow;
  }
  return overflow;
}

}  // namespace edgegan::cpu
