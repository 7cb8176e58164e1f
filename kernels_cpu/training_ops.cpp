#include "kernels_cpu/training_ops.h"

#include <algorithm>
#include <cmath>

#include "kernels_cpu/conv_transpose_backward.h"  // bias_backward
#include "kernels_cpu/gemm.h"

namespace edgegan::cpu {

void dense_backward(int64_t rows, int64_t in, int64_t out, const float* x, const float* w, const float* dy, float* dx, float* dw,
                    float* db) {
  if (dx) {
    std::fill(dx, dx + rows * in, 0.f);
    gemm_accumulate_bt(rows, in, out, dy, out, w, out, dx, in);  // dy · Wᵀ
  }
  std::fill(dw, dw + in * out, 0.f);
  gemm_accumulate_at(in, out, rows, x, in, dy, out, dw, out);  // xᵀ · dy
  if (db) bias_backward(rows, out, dy, db);
}

void activation_backward(int64_t count, const float* y, float* grad, Activation a, float alpha) {
  // One branch-free loop per activation (vectorised), not a switch per element.
  switch (a) {
    case Activation::kRelu:
      for (int64_t i = 0; i < count; ++i) grad[i] = y[i] > 0.f ? grad[i] : 0.f;
      break;
    case Activation::kLeakyRelu:  // alpha > 0: sign(y) = sign(x)
      for (int64_t i = 0; i < count; ++i) grad[i] = y[i] > 0.f ? grad[i] : grad[i] * alpha;
      break;
    case Activation::kTanh:
      for (int64_t i = 0; i < count; ++i) grad[i] *= 1.f - y[i] * y[i];
      break;
    case Activation::kSigmoid:
      for (int64_t i = 0; i < count; ++i) grad[i] *= y[i] * (1.f - y[i]);
      break;
    case Activation::kNone: break;
  }
}

void embedding_backward(int64_t count, const int64_t* indices, int64_t rows, int64_t dim, const float* dy, float* dtable) {
  std::fill(dtable, dtable + rows * dim, 0.f);
  for (int64_t k = 0; k < count; ++k) {
    float* row = dtable + indices[k] * dim;
    for (int64_t d = 0; d < dim; ++d) row[d] += dy[k * dim + d];
  }
}

void concat_backward(int64_t outer, const float* dy, int inputs, const int64_t* chunks, float* const* dinputs) {
  for (int64_t o = 0; o < outer; ++o)
    for (int i = 0; i < inputs; ++i) {
      std::copy(dy, dy + chunks[i], dinputs[i] + o * chunks[i]);
      dy += chunks[i];
    }
}

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
