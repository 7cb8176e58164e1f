// activation_run.h, built for the AVX2 family.
#include "kernels_cpu/activation/activation_functors.h"
#include "kernels_cpu/activation/activation_run.h"

namespace edgegan::cpu {

void activate_run__avx2(float* y, int64_t n, Activation activation, float alpha, float beta) {
  activate_run_body(y, n, activation, alpha, beta);
}

}  // namespace edgegan::cpu
