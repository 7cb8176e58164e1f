#include "kernels_cpu/optimizer/optimizer.h"

#include <cmath>

namespace edgegan::cpu {

void sgd_step(int64_t count, float* p, const float* g, float* velocity, bool first_step, const SgdOptions& o) {
  for (int64_t i = 0; i < count; ++i) {
    float d = g[i] + o.weight_decay * p[i];
    if (o.momentum != 0.f) {
      velocity[i] = first_step ? d : o.momentum * velocity[i] + (1.f - o.dampening) * d;
      d = o.nesterov ? d + o.momentum * velocity[i] : velocity[i];
    }
    p[i] -= o.lr * d;
  }
}

void adam_step(int64_t count, float* __restrict p, const float* __restrict g, float* __restrict m, float* __restrict v, int64_t step,
               const AdamOptions& o) {
  // The four arrays never overlap (restrict) and sqrt never sees a negative value
  // (the file is built with -fno-math-errno), so the loop vectorises; SIMD sqrt
  // and division round exactly as the scalar ones, so results are unchanged.
  const double bias1 = 1.0 - std::pow(static_cast<double>(o.beta1), static_cast<double>(step));
  const double bias2 = 1.0 - std::pow(static_cast<double>(o.beta2), static_cast<double>(step));
  const float step_size = static_cast<float>(o.lr / bias1);
  const float bias2_sqrt = static_cast<float>(std::sqrt(bias2));
  for (int64_t i = 0; i < count; ++i) {
    const float d = g[i] + o.weight_decay * p[i];
    m[i] = o.beta1 * m[i] + (1.f - o.beta1) * d;
    v[i] = o.beta2 * v[i] + (1.f - o.beta2) * d * d;
    // torch: denom = sqrt(v) / sqrt(bias2) + eps; p -= (lr / bias1) * m / denom
    p[i] -= step_size * m[i] / (std::sqrt(v[i]) / bias2_sqrt + o.eps);
  }
}

}  // namespace edgegan::cpu
