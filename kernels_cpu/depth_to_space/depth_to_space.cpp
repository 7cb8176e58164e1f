#include "kernels_cpu/depth_to_space/depth_to_space.h"

#include <cstring>

namespace edgegan::cpu {
namespace {

// Depth channel of space channel c at block offset (bh, bw).
inline int64_t depth_channel(const DepthToSpaceShape& s, int64_t bh, int64_t bw, int64_t c) {
  const int64_t b = s.block;
  return s.mode == DepthToSpaceMode::kDCR ? (bh * b + bw) * s.channels + c : c * b * b + bh * b + bw;
}

// T: float, or an fp16 session's halves (moved as they are).
template <bool ToSpace, bool Add, typename T>
void move_row(const DepthToSpaceShape& s, int64_t n, int64_t hs, const T* x, T* y) {
  const int64_t b = s.block, c = s.channels, cd = c * b * b, ws_count = s.width * b;
  const int64_t hd = hs / b, bh = hs % b;
  T* space_out = nullptr;
  const T* space_in = nullptr;
  const int64_t space_row = (n * s.height * b + hs) * ws_count * c, depth_row = (n * s.height + hd) * s.width * cd;
  if (ToSpace) space_out = y + space_row;
  else space_in = x + space_row;
  for (int64_t wd = 0; wd < s.width; ++wd) {
    if (s.mode == DepthToSpaceMode::kDCR) {
      // The b space pixels of this depth pixel hold depth channels [bh*b*C, (bh+1)*b*C).
      const int64_t count = b * c, space_at = wd * b * c, depth_at = depth_row + wd * cd + bh * b * c;
      const T* src = ToSpace ? x + depth_at : space_in + space_at;
      T* dst = ToSpace ? space_out + space_at : y + depth_at;
      if (Add) {
        for (int64_t i = 0; i < count; ++i) dst[i] += src[i];
      } else {
        std::memcpy(dst, src, static_cast<size_t>(count) * sizeof(T));
      }
    } else {
      const int64_t step = b * b;
      for (int64_t bw = 0; bw < b; ++bw) {
        const int64_t space_at = (wd * b + bw) * c, depth_at = depth_row + wd * cd + bh * b + bw;
        if (ToSpace) {
          const T* src = x + depth_at;
          T* dst = space_out + space_at;
          for (int64_t k = 0; k < c; ++k) dst[k] = Add ? dst[k] + src[k * step] : src[k * step];
        } else {
          const T* src = space_in + space_at;
          T* dst = y + depth_at;
          for (int64_t k = 0; k < c; ++k) dst[k * step] = Add ? dst[k * step] + src[k] : src[k];
        }
      }
    }
  }
}

template <bool ToSpace, bool Add, typename T>
void move_all(const DepthToSpaceShape& s, const T* x, T* y, int threads) {
  const int64_t rows = s.batch * s.height * s.block;
  (void)threads;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && rows > 1)
  for (int64_t r = 0; r < rows; ++r) move_row<ToSpace, Add, T>(s, r / (s.height * s.block), r % (s.height * s.block), x, y);
}

}  // namespace

void depth_to_space_reference(const DepthToSpaceShape& s, bool to_space, const float* x, float* y) {
  const int64_t b = s.block, c = s.channels, cd = c * b * b, hs_count = s.height * b, ws_count = s.width * b;
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t h = 0; h < hs_count; ++h)
      for (int64_t w = 0; w < ws_count; ++w)
        for (int64_t k = 0; k < c; ++k) {
          const int64_t space = ((n * hs_count + h) * ws_count + w) * c + k;
          const int64_t depth = ((n * s.height + h / b) * s.width + w / b) * cd + depth_channel(s, h % b, w % b, k);
          if (to_space) y[space] = x[depth];
          else y[depth] = x[space];
        }
}

void depth_to_space(const DepthToSpaceShape& s, bool to_space, const float* x, float* y, bool accumulate, int threads) {
  if (to_space) accumulate ? move_all<true, true>(s, x, y, threads) : move_all<true, false>(s, x, y, threads);
  else accumulate ? move_all<false, true>(s, x, y, threads) : move_all<false, false>(s, x, y, threads);
}

void depth_to_space_halves(const DepthToSpaceShape& s, bool to_space, const uint16_t* x, uint16_t* y, int threads) {
  to_space ? move_all<true, false>(s, x, y, threads) : move_all<false, false>(s, x, y, threads);
}

}  // namespace edgegan::cpu
