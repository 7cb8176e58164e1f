#include "kernels_cpu/softmax/softmax.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace edgegan::cpu {

void softmax_reference(const SoftmaxShape& s, const float* x, float* y) {
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < s.inner; ++i) {
      const float* p = x + o * s.axis * s.inner + i;
      float* q = y + o * s.axis * s.inner + i;
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t a = 0; a < s.axis; ++a) m = std::max(m, static_cast<double>(p[a * s.inner]));
      double sum = 0;
      for (int64_t a = 0; a < s.axis; ++a) sum += std::exp(p[a * s.inner] - m);
      for (int64_t a = 0; a < s.axis; ++a) q[a * s.inner] = static_cast<float>(std::exp(p[a * s.inner] - m) / sum);
    }
}

void softmax(const SoftmaxShape& s, const float* x, float* y, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && s.outer > 1)
  for (int64_t o = 0; o < s.outer; ++o) {
    const float* p = x + o * s.axis * s.inner;
    float* q = y + o * s.axis * s.inner;
    if (s.inner == 1) {  // attention rows: one contiguous row
      float m = -std::numeric_limits<float>::infinity();
      for (int64_t a = 0; a < s.axis; ++a) m = std::max(m, p[a]);
      float sum = 0.f;
      for (int64_t a = 0; a < s.axis; ++a) sum += (q[a] = std::exp(p[a] - m));
      const float r = 1.f / sum;
      for (int64_t a = 0; a < s.axis; ++a) q[a] *= r;
      continue;
    }
    // Channels innermost (NHWC): the max, exponentials and sums as rows of `inner`.
    for (int64_t i = 0; i < s.inner; ++i) q[i] = p[i];
    for (int64_t a = 1; a < s.axis; ++a)
      for (int64_t i = 0; i < s.inner; ++i) q[i] = std::max(q[i], p[a * s.inner + i]);
    // q's first row holds the maxima until the last exponential has read them.
    for (int64_t a = s.axis - 1; a >= 0; --a)
      for (int64_t i = 0; i < s.inner; ++i) q[a * s.inner + i] = std::exp(p[a * s.inner + i] - q[i]);
    for (int64_t i = 0; i < s.inner; ++i) {
      float sum = 0.f;
      for (int64_t a = 0; a < s.axis; ++a) sum += q[a * s.inner + i];
      const float r = 1.f / sum;
      for (int64_t a = 0; a < s.axis; ++a) q[a * s.inner + i] *= r;
    }
  }
}

void softmax_backward(const SoftmaxShape& s, const float* y, const float* dy, float* dx, bool accumulate, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && s.outer > 1)
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < s.inner; ++i) {
      const int64_t base = o * s.axis * s.inner + i;
      double dot = 0;
      for (int64_t a = 0; a < s.axis; ++a) dot += static_cast<double>(dy[base + a * s.inner]) * y[base + a * s.inner];
      for (int64_t a = 0; a < s.axis; ++a) {
        const int64_t k = base + a * s.inner;
        const float g = y[k] * (dy[k] - static_cast<float>(dot));
        dx[k] = accumulate ? dx[k] + g : g;
      }
    }
}

}  // namespace edgegan::cpu
