#include "kernels_cpu/dense/dense.h"

#include <algorithm>
#include <type_traits>

#include "kernels_cpu/gemm/gemm.h"
#include "kernels_cpu/common/epilogue.h"
#include "kernels_cpu/activation/activation.h"
#include "kernels_cpu/common/half_convert.h"
#include "kernels_cpu/common/thread_index.h"
#include "kernels_common/conv_geometry.h"

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

namespace {

constexpr int64_t kBlock = 64;  // output features per task

// The column blocks over threads: each filled with the bias, given x · W, activated.
// Halves out (YT): each block made in its thread's rows x kBlock floats of `stage`,
// then narrowed; returns whether a narrowing overflowed.
template <typename YT>
bool dense_blocks(int64_t rows, int64_t in, int64_t out, const float* x, const float* w, YT* y, const Epilogue& ep, int threads, float* stage) {
  constexpr bool halves = !std::is_same_v<YT, float>;
  const int64_t blocks = (out + kBlock - 1) / kBlock;
  bool overflow = false;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1) reduction(|| : overflow)
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t o0 = b * kBlock, width = std::min(kBlock, out - o0);
    float* block = nullptr;
    int64_t ldc = out;
    if constexpr (halves) block = stage + thread_index() * rows * kBlock, ldc = width;
    else block = y + o0;
    for (int64_t r = 0; r < rows; ++r) {
      float* dst = block + r * ldc;
      if (ep.bias) std::copy(ep.bias + o0, ep.bias + o0 + width, dst);
      else std::fill(dst, dst + width, 0.f);
    }
    gemm_accumulate(rows, width, in, x, in, w + o0, out, block, ldc);
    apply_activation(block, rows, width, ldc, ep.activation, ep.alpha, ep.beta);
    if constexpr (halves)
      for (int64_t r = 0; r < rows; ++r) overflow = narrow_to_halves(block + r * width, y + r * out + o0, width) || overflow;
  }
  return overflow;
}

}  // namespace

void dense(int64_t rows, int64_t in, int64_t out, const float* x, const float* w, float* y,
           const Epilogue& ep, int threads) {
  dense_blocks(rows, in, out, x, w, y, ep, threads, nullptr);
}

int64_t dense_halves_workspace(int64_t rows, int64_t in, int threads) {
  return saturating_sum({saturating_product({rows, in}), saturating_product({std::max(1, threads), rows, kBlock})});
}

bool dense_halves(int64_t rows, int64_t in, int64_t out, const uint16_t* x, const float* w, uint16_t* y, const Epilogue& ep, int threads,
                  float* workspace) {
  widen_halves(x, workspace, rows * in);
  return dense_blocks(rows, in, out, workspace, w, y, ep, threads, workspace + rows * in);
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
