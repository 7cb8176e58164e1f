#include "kernels_cpu/resize/resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels_cpu/common/half_convert.h"
#include "kernels_cpu/common/thread_index.h"

namespace edgegan::cpu {

void resize_reference(const ResizeShape& s, const float* x, float* y) {
  const int64_t c = s.channels;
  int32_t hi[4], wi[4];
  float hw[4], ww[4];
  const int taps = resize_taps(s.params.mode);
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t oh = 0; oh < s.h.out; ++oh) {
      resize_axis_taps(s.h, s.params, oh, hi, hw);
      for (int64_t ow = 0; ow < s.w.out; ++ow) {
        resize_axis_taps(s.w, s.params, ow, wi, ww);
        for (int64_t k = 0; k < c; ++k) {
          double acc = 0;
          for (int i = 0; i < taps; ++i)
            for (int j = 0; j < taps; ++j)
              acc += static_cast<double>(hw[i]) * ww[j] * x[((n * s.h.in + hi[i]) * s.w.in + wi[j]) * c + k];
          y[((n * s.h.out + oh) * s.w.out + ow) * c + k] = static_cast<float>(acc);
        }
      }
    }
}

int64_t resize_workspace(const ResizeShape& s, int threads, bool halves) {
  if (s.params.mode == ResizeMode::kNearest) return 0;
  // halves: each thread's widened input row and float output row too
  const int64_t per_thread = s.w.in * s.channels + (halves ? s.w.in * s.channels + s.w.out * s.channels : 0);
  return static_cast<int64_t>(std::max(threads, 1)) * per_thread;
}

namespace {

// T: float, or an fp16 session's halves: an input row is widened (exactly) into
// `wide` before it is blended, an output row blended into floats and narrowed; the
// blends are the same loops. Returns whether a narrowed value overflowed.
template <typename T>
bool resize_rows(const ResizeShape& s, const ResizeTables& t, const T* x, T* y, float* workspace, int threads) {
  constexpr bool kHalves = sizeof(T) == sizeof(uint16_t);
  const int64_t c = s.channels, rows = s.batch * s.h.out, in_row = s.w.in * c, out_row = s.w.out * c;
  const int taps = t.taps;
  if (s.params.mode == ResizeMode::kNearest) {  // a copy: halves move as they are
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && rows > 1)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t n = r / s.h.out, oh = r % s.h.out;
      const T* src = x + (n * s.h.in + t.h_index[static_cast<size_t>(oh)]) * in_row;
      T* out = y + r * out_row;
      for (int64_t ow = 0; ow < s.w.out; ++ow)
        std::memcpy(out + ow * c, src + t.w_index[static_cast<size_t>(ow)] * c, static_cast<size_t>(c) * sizeof(T));
    }
    return false;
  }
  std::vector<float> own;
  if (!workspace) {
    own.resize(static_cast<size_t>(resize_workspace(s, threads, kHalves)));
    workspace = own.data();
  }
  const int64_t per_thread = resize_workspace(s, 1, kHalves);
  bool overflow = false;
#pragma omp parallel num_threads(threads) if (threads > 1 && rows > 1) reduction(|| : overflow)
  {
    const int thread = thread_index();
    float* __restrict blend = workspace + thread * per_thread;
    float* wide = blend + in_row;
    float* wide_out = wide + in_row;
    auto input_row = [&](int64_t n, int32_t h) -> const float* {
      if constexpr (kHalves) {
        widen_halves(x + (n * s.h.in + h) * in_row, wide, in_row);
        return wide;
      } else {
        return x + (n * s.h.in + h) * in_row;
      }
    };
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t n = r / s.h.out, oh = r % s.h.out;
      const int32_t* hi = &t.h_index[static_cast<size_t>(oh * taps)];
      const float* hw = &t.h_weight[static_cast<size_t>(oh * taps)];
      // The H taps blend whole input rows.
      {
        const float* __restrict src = input_row(n, hi[0]);
        const float w = hw[0];
        for (int64_t i = 0; i < in_row; ++i) blend[i] = w * src[i];
      }
      for (int k = 1; k < taps; ++k) {
        const float* __restrict src = input_row(n, hi[k]);
        const float w = hw[k];
        for (int64_t i = 0; i < in_row; ++i) blend[i] += w * src[i];
      }
      // Then each output pixel blends its W taps of that row.
      float* out;
      if constexpr (kHalves) out = wide_out;
      else out = y + r * out_row;
      for (int64_t ow = 0; ow < s.w.out; ++ow) {
        const int32_t* wi = &t.w_index[static_cast<size_t>(ow * taps)];
        const float* ww = &t.w_weight[static_cast<size_t>(ow * taps)];
        float* __restrict o = out + ow * c;
        {
          const float* __restrict src = blend + wi[0] * c;
          const float w = ww[0];
          for (int64_t k = 0; k < c; ++k) o[k] = w * src[k];
        }
        for (int j = 1; j < taps; ++j) {
          const float* __restrict src = blend + wi[j] * c;
          const float w = ww[j];
          for (int64_t k = 0; k < c; ++k) o[k] += w * src[k];
        }
      }
      if constexpr (kHalves) overflow = narrow_to_halves(out, y + r * out_row, out_row) || overflow;
    }
  }
  return overflow;
}

}  // namespace

void resize(const ResizeShape& s, const ResizeTables& t, const float* x, float* y, float* workspace, int threads) {
  resize_rows(s, t, x, y, workspace, threads);
}

bool resize_halves(const ResizeShape& s, const ResizeTables& t, const uint16_t* x, uint16_t* y, float* workspace, int threads) {
  return resize_rows(s, t, x, y, workspace, threads);
}

void resize_backward(const ResizeShape& s, const ResizeTables& t, const float* dy, float* dx, bool accumulate, int threads) {
  const int64_t c = s.channels, rows = s.batch * s.h.in, in_row = s.w.in * c, out_row = s.w.out * c;
  const int taps = t.taps;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && rows > 1)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t n = r / s.h.in, ih = r % s.h.in;
    float* d = dx + r * in_row;
    if (!accumulate) std::fill(d, d + in_row, 0.f);
    for (int32_t e = t.h_readers_begin[static_cast<size_t>(ih)]; e < t.h_readers_begin[static_cast<size_t>(ih) + 1]; ++e) {
      const float wh = t.h_reader_weight[static_cast<size_t>(e)];
      const float* g = dy + (n * s.h.out + t.h_reader_row[static_cast<size_t>(e)]) * out_row;
      for (int64_t ow = 0; ow < s.w.out; ++ow) {
        const float* __restrict src = g + ow * c;
        for (int j = 0; j < taps; ++j) {
          const float w = wh * t.w_weight[static_cast<size_t>(ow * taps + j)];
          float* __restrict dst = d + t.w_index[static_cast<size_t>(ow * taps + j)] * c;
          for (int64_t k = 0; k < c; ++k) dst[k] += w * src[k];
        }
      }
    }
  }
}

}  // namespace edgegan::cpu
