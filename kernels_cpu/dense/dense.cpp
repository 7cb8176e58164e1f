#include "kernels_cpu/dense/dense.h"

#include <algorithm>

#include "kernels_cpu/gemm/gemm.h"
#include "kernels_cpu/common/epilogue.h"
#include "kernels_cpu/activation/activation.h"

namespace edgegan::cpu {

void dense_reference(int64_t rows, int64_t in, int64_t out, const float* x, const float* w, float* y,
                     const Epilogue& ep) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o) {
      float acc = ep.bias ? ep.bias[o] : 0.f;
      for (int64_t i = 0; i < in; ++i) acc += x[r * in + i] * w[i * out + o];
      y[r * out + o] = activate(acc, ep.activation, ep.alpha, ep.beta);
    }
}

void dense(int64_t rows, int64_t in, int64_t out, const float* x, const float* w, float* y,
           const Epilogue& ep, int threads) {
  const int64_t block = 64;
  const int64_t blocks = (out + block - 1) / block;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t o0 = b * block, width = std::min(block, out - o0);
    for (int64_t r = 0; r < rows; ++r) {
      float* dst = y + r * out + o0;
      if (ep.bias) std::copy(ep.bias + o0, ep.bias + o0 + width, dst);
      else std::fill(dst, dst + width, 0.f);
    }
    gemm_accumulate(rows, width, in, x, in, w + o0, out, y + o0, out);
    apply_activation(y + o0, rows, width, out, ep.activation, ep.alpha, ep.beta);
  }
}


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

}  // namespace edgegan::cpu
