#include "kernels_cpu/elementwise/elementwise.h"

namespace edgegan::cpu {

void elementwise_activation(int64_t count, const float* x, float* y, Activation activation, float alpha, float beta) {
  for (int64_t i = 0; i < count; ++i) y[i] = activate(x[i], activation, alpha, beta);
}

}  // namespace edgegan::cpu
