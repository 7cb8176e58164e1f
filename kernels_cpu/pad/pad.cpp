#include "kernels_cpu/pad/pad.h"

#include <algorithm>
#include <cstring>

namespace edgegan::cpu {
namespace {

// The output columns [begin, end) that read the interior, input column = ow - pad_begin.
void interior(const PadAxis& a, int64_t& begin, int64_t& end) {
  begin = std::clamp<int64_t>(a.lo() + a.pad_begin, 0, a.out());
  end = std::clamp<int64_t>(a.hi() + a.pad_begin, begin, a.out());
}

void fill(float* p, int64_t n, float v) { std::fill(p, p + n, v); }

void add(float* __restrict dst, const float* __restrict src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
}

}  // namespace

void pad_reference(const PadShape& s, const float* x, float* y) {
  const int64_t oh = s.h.out(), ow = s.w.out(), c = s.channels;
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        const int64_t si = pad_source(s.h, s.mode, i), sj = pad_source(s.w, s.mode, j);
        for (int64_t k = 0; k < c; ++k)
          y[((n * oh + i) * ow + j) * c + k] = si < 0 || sj < 0 ? s.value : x[((n * s.h.in + si) * s.w.in + sj) * c + k];
      }
}

void pad(const PadShape& s, const float* x, float* y, int threads) {
  const int64_t oh = s.h.out(), ow = s.w.out(), c = s.channels, rows = s.batch * oh;
  int64_t begin = 0, end = 0;
  interior(s.w, begin, end);
  (void)threads;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && rows > 1)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t n = r / oh, i = r % oh;
    float* out = y + r * ow * c;
    const int64_t si = pad_source(s.h, s.mode, i);
    if (si < 0) {
      fill(out, ow * c, s.value);
      continue;
    }
    const float* in = x + (n * s.h.in + si) * s.w.in * c;
    for (int64_t j = 0; j < begin; ++j) {
      const int64_t sj = pad_source(s.w, s.mode, j);
      if (sj < 0) fill(out + j * c, c, s.value);
      else std::memcpy(out + j * c, in + sj * c, static_cast<size_t>(c) * sizeof(float));
    }
    if (end > begin)
      std::memcpy(out + begin * c, in + (begin - s.w.pad_begin) * c, static_cast<size_t>((end - begin) * c) * sizeof(float));
    for (int64_t j = end; j < ow; ++j) {
      const int64_t sj = pad_source(s.w, s.mode, j);
      if (sj < 0) fill(out + j * c, c, s.value);
      else std::memcpy(out + j * c, in + sj * c, static_cast<size_t>(c) * sizeof(float));
    }
  }
}

void pad_backward(const PadShape& s, const float* dy, float* dx, bool accumulate, int threads) {
  const int64_t oh = s.h.out(), ow = s.w.out(), c = s.channels, rows = s.batch * s.h.in, row = s.w.in * c;
  const int64_t lo = s.h.lo(), hi = s.h.hi();
  int64_t begin = 0, end = 0;
  interior(s.w, begin, end);
  (void)threads;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && rows > 1)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t n = r / s.h.in, ih = r % s.h.in;
    float* out = dx + r * row;
    if (!accumulate) fill(out, row, 0.f);
    if (ih < lo || ih >= hi) continue;
    for (int64_t i = 0; i < oh; ++i) {
      if (pad_source(s.h, s.mode, i) != ih) continue;
      const float* g = dy + (n * oh + i) * ow * c;
      for (int64_t j = 0; j < begin; ++j)
        if (const int64_t sj = pad_source(s.w, s.mode, j); sj >= 0) add(out + sj * c, g + j * c, c);
      if (end > begin) add(out + (begin - s.w.pad_begin) * c, g + begin * c, (end - begin) * c);
      for (int64_t j = end; j < ow; ++j)
        if (const int64_t sj = pad_source(s.w, s.mode, j); sj >= 0) add(out + sj * c, g + j * c, c);
    }
  }
}

}  // namespace edgegan::cpu
