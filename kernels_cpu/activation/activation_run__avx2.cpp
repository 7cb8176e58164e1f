// activation_run.h, built for the AVX2 family.
#include "kernels_cpu/activation/activation_functors.h"
#include "kernels_cpu/activation/activation_run.h"

namespace edgegan::cpu {

void activate_run__avx2(float* y, int64_t n, Activation activation, float alpha, float beta) {
  if (activation == Activation::kNone) return;
  with_activation(
      activation, alpha, [&](auto f) {
        for (int64_t i = 0; i < n; ++i) y[i] = f(y[i]);
      },
      beta);
}

}  // namespace edgegan::cpu
