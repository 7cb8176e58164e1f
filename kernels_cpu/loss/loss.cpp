#include "kernels_cpu/loss/loss.h"

#include <algorithm>
#include <cmath>

namespace edgegan::cpu {

double bce_with_logits_loss(int64_t count, const float* z, const float* t, float* grad) {
  double loss = 0;
  for (int64_t i = 0; i < count; ++i) {
    // max(z,0) - z*t + log(1 + exp(-|z|)): never overflows.
    const double zi = z[i], ti = t[i];
    loss += std::max(zi, 0.0) - zi * ti + std::log1p(std::exp(-std::abs(zi)));
    grad[i] = static_cast<float>((1.0 / (1.0 + std::exp(-zi)) - ti) / static_cast<double>(count));
  }
  return loss / static_cast<double>(count);
}

double mse_loss(int64_t count, const float* p, const float* t, float* grad) {
  double loss = 0;
  for (int64_t i = 0; i < count; ++i) {
    const double d = static_cast<double>(p[i]) - t[i];
    loss += d * d;
    grad[i] = static_cast<float>(2.0 * d / static_cast<double>(count));
  }
  return loss / static_cast<double>(count);
}

double l1_loss(int64_t count, const float* p, const float* t, float* grad) {
  double loss = 0;
  for (int64_t i = 0; i < count; ++i) {
    const double d = static_cast<double>(p[i]) - t[i];
    loss += std::abs(d);
    grad[i] = static_cast<float>((d > 0 ? 1.0 : d < 0 ? -1.0 : 0.0) / static_cast<double>(count));
  }
  return loss / static_cast<double>(count);
}

}  // namespace edgegan::cpu
