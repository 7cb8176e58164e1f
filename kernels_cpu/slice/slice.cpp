#include "kernels_cpu/slice/slice.h"

#include <algorithm>
#include <cstring>

namespace edgegan::cpu {
namespace {

// Rows below this many floats are not worth a parallel region.
constexpr int64_t kParallelFloats = 1 << 15;

inline const float* source_row(const SliceShape& s, const float* x, int64_t o, int64_t j) {
  return x + (o * s.length + s.start + j * s.step) * s.inner;
}

}  // namespace

void slice_reference(const SliceShape& s, const float* x, float* y) {
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t j = 0; j < s.count; ++j)
      for (int64_t i = 0; i < s.inner; ++i) y[(o * s.count + j) * s.inner + i] = x[(o * s.length + s.start + j * s.step) * s.inner + i];
}

void slice(const SliceShape& s, const float* x, float* y, int threads) {
  const int64_t rows = s.outer * s.count;
  const size_t bytes = static_cast<size_t>(s.inner) * sizeof(float);
#pragma omp parallel for num_threads(threads) schedule(static) if (rows * s.inner >= kParallelFloats && threads > 1)
  for (int64_t r = 0; r < rows; ++r) std::memcpy(y + r * s.inner, source_row(s, x, r / s.count, r % s.count), bytes);
}

void slice_backward(const SliceShape& s, const float* dy, float* dx, bool accumulate, int threads) {
  const int64_t total = s.outer * s.length * s.inner;
  const bool parallel = total >= kParallelFloats && threads > 1;
  if (!accumulate) {
#pragma omp parallel for num_threads(threads) schedule(static) if (parallel)
    for (int64_t o = 0; o < s.outer; ++o) std::fill(dx + o * s.length * s.inner, dx + (o + 1) * s.length * s.inner, 0.f);
  }
  // Each kept row of dx receives exactly one row of dy: no two iterations write the same floats.
  const int64_t rows = s.outer * s.count;
#pragma omp parallel for num_threads(threads) schedule(static) if (parallel)
  for (int64_t r = 0; r < rows; ++r) {
    float* d = const_cast<float*>(source_row(s, dx, r / s.count, r % s.count));
    const float* g = dy + r * s.inner;
    for (int64_t i = 0; i < s.inner; ++i) d[i] += g[i];
  }
}

}  // namespace edgegan::cpu
