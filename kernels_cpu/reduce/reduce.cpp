#include "kernels_cpu/reduce/reduce.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace edgegan::cpu {
namespace {

// Per input axis, the output's stride (0 along a reduced axis).
void output_strides(const ReduceShape& s, int64_t* stride) {
  int64_t r = 1;
  for (int k = s.rank - 1; k >= 0; --k) {
    stride[k] = s.reduced[k] ? 0 : r;
    r *= s.reduced[k] ? 1 : s.dims[k];
  }
}

// Calls f(input index, output index) over the input in index order.
template <typename F>
void for_each_input(const ReduceShape& s, F f) {
  int64_t stride[kReduceMaxRank], idx[kReduceMaxRank] = {};
  output_strides(s, stride);
  const int64_t n = reduce_input_elements(s);
  int64_t o = 0;
  for (int64_t i = 0; i < n; ++i) {
    f(i, o);
    for (int k = s.rank - 1; k >= 0; --k) {
      o += stride[k];
      if (++idx[k] < s.dims[k]) break;
      o -= stride[k] * s.dims[k];
      idx[k] = 0;
    }
  }
}

template <typename Acc>
Acc start(ReduceOp op) {
  return op == ReduceOp::kMax ? -std::numeric_limits<Acc>::infinity() : Acc(0);
}
template <typename Acc>
Acc fold(ReduceOp op, Acc acc, float v) {
  switch (op) {
    case ReduceOp::kMax: return v > acc || std::isnan(v) ? Acc(v) : acc;
    case ReduceOp::kL2: return acc + Acc(v) * Acc(v);
    default: return acc + Acc(v);
  }
}
template <typename Acc>
float finish(ReduceOp op, Acc acc, int64_t count) {
  switch (op) {
    case ReduceOp::kMean: return static_cast<float>(acc / Acc(count));
    case ReduceOp::kL2: return static_cast<float>(std::sqrt(acc));
    default: return static_cast<float>(acc);
  }
}

}  // namespace

void reduce_reference(const ReduceShape& s, ReduceOp op, const float* x, float* y) {
  const int64_t outputs = reduce_output_elements(s);
  std::vector<double> acc(static_cast<size_t>(outputs), start<double>(op));
  for_each_input(s, [&](int64_t i, int64_t o) { acc[static_cast<size_t>(o)] = fold(op, acc[static_cast<size_t>(o)], x[i]); });
  for (int64_t o = 0; o < outputs; ++o) y[o] = finish(op, acc[static_cast<size_t>(o)], reduce_count(s));
}

void reduce(const ReduceShape& s, ReduceOp op, const float* x, float* y, int threads) {
  const int64_t count = reduce_count(s);
  ReduceBlock b;
  if (!reduce_block(s, b)) {
    const int64_t outputs = reduce_output_elements(s);
    for (int64_t o = 0; o < outputs; ++o) y[o] = start<float>(op);
    for_each_input(s, [&](int64_t i, int64_t o) { y[o] = fold(op, y[o], x[i]); });
    for (int64_t o = 0; o < outputs; ++o) y[o] = finish(op, y[o], count);
    return;
  }
  if (b.inner == 1) {  // each output a contiguous run: one sum per thread-task
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && b.outer > 1)
    for (int64_t o = 0; o < b.outer; ++o) {
      const float* p = x + o * b.reduce;
      float acc = start<float>(op);
      if (op == ReduceOp::kMax) {
        for (int64_t r = 0; r < b.reduce; ++r) acc = fold(op, acc, p[r]);
      } else if (op == ReduceOp::kL2) {
        for (int64_t r = 0; r < b.reduce; ++r) acc += p[r] * p[r];
      } else {
        for (int64_t r = 0; r < b.reduce; ++r) acc += p[r];
      }
      y[o] = finish(op, acc, count);
    }
    return;
  }
  // Rows of `inner` outputs accumulated row by row: the inner loop vectorises.
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && b.outer > 1)
  for (int64_t o = 0; o < b.outer; ++o) {
    float* out = y + o * b.inner;
    const float* p = x + o * b.reduce * b.inner;
    for (int64_t i = 0; i < b.inner; ++i) out[i] = start<float>(op);
    for (int64_t r = 0; r < b.reduce; ++r, p += b.inner) {
      if (op == ReduceOp::kMax) {
        for (int64_t i = 0; i < b.inner; ++i) out[i] = fold(op, out[i], p[i]);
      } else if (op == ReduceOp::kL2) {
        for (int64_t i = 0; i < b.inner; ++i) out[i] += p[i] * p[i];
      } else {
        for (int64_t i = 0; i < b.inner; ++i) out[i] += p[i];
      }
    }
    for (int64_t i = 0; i < b.inner; ++i) out[i] = finish(op, out[i], count);
  }
}

int64_t reduce_backward_workspace(const ReduceShape& s, ReduceOp op) { return op == ReduceOp::kMax ? reduce_output_elements(s) : 0; }

void reduce_backward(const ReduceShape& s, ReduceOp op, const float* x, const float* y, const float* dy, float* dx, bool accumulate,
                     float* ties) {
  const int64_t count = reduce_count(s);
  if (op == ReduceOp::kMax) {  // how many elements share each maximum
    std::fill(ties, ties + reduce_output_elements(s), 0.f);
    for_each_input(s, [&](int64_t i, int64_t o) {
      if (x[i] == y[o]) ties[o] += 1.f;
    });
  }
  for_each_input(s, [&](int64_t i, int64_t o) {
    float g = 0.f;
    switch (op) {
      case ReduceOp::kSum: g = dy[o]; break;
      case ReduceOp::kMean: g = dy[o] / static_cast<float>(count); break;
      case ReduceOp::kL2: g = y[o] > 0.f ? dy[o] * x[i] / y[o] : 0.f; break;
      case ReduceOp::kMax: g = x[i] == y[o] ? dy[o] / ties[o] : 0.f; break;
    }
    dx[i] = accumulate ? dx[i] + g : g;
  });
}

}  // namespace edgegan::cpu
