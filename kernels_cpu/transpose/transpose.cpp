#include "kernels_cpu/transpose/transpose.h"

#include <algorithm>

namespace edgegan::cpu {
namespace {

// Input axes that are neighbours in the same order on both sides merged into one.
TransposeShape merged(const TransposeShape& s) {
  TransposeShape m;
  int group_of[kTransposeMaxRank] = {};  // input axis -> merged input axis
  int first[kTransposeMaxRank] = {};     // merged axis -> first input axis
  int groups = 0;
  for (int k = 0; k < s.rank; ++k) {
    // Axis k joins the previous input axis when it follows it in the output too.
    bool joins = false;
    if (k > 0)
      for (int i = 1; i < s.rank; ++i)
        if (s.perm[i] == k && s.perm[i - 1] == k - 1) joins = true;
    if (!joins) first[groups] = k, m.in[groups] = 1, ++groups;
    group_of[k] = groups - 1;
    m.in[groups - 1] *= s.in[k];
  }
  m.rank = 0;
  for (int i = 0; i < s.rank; ++i) {
    const int g = group_of[s.perm[i]];
    if (first[g] == s.perm[i]) m.perm[m.rank++] = g;
  }
  return m;
}

// y (or dx) over the output's index space, element o from input offset in(o).
template <typename F>
void walk(const TransposeShape& s, int threads, F f) {
  int64_t out[kTransposeMaxRank] = {}, stride[kTransposeMaxRank] = {};
  transpose_output(s, out, stride);
  const int last = s.rank - 1;
  const int64_t run = s.rank ? out[last] : 1, rows = s.rank ? transpose_elements(s) / run : 1;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && rows > 1)
  for (int64_t r = 0; r < rows; ++r) {
    int64_t base = 0, rest = r;
    for (int k = last - 1; k >= 0; --k) {
      base += (rest % out[k]) * stride[k];
      rest /= out[k];
    }
    const int64_t step = s.rank ? stride[last] : 1;
    for (int64_t j = 0; j < run; ++j) f(r * run + j, base + j * step);
  }
}

// The output's last axis is not the input's (a matrix transpose inside, as attention's
// kᵀ and BigGAN's betaᵀ): the element walk would read one value per cache line (50 ms for
// a 4096 x 1024 matrix). Instead tiles of kTile x kTile between the output axis `p` that
// reads the input contiguously and the output's last axis, each tile's input rows and
// output rows staying in L1.
void transpose_tiled(const TransposeShape& s, const float* x, float* y, int threads) {
  constexpr int64_t kTile = 16;
  int64_t out[kTransposeMaxRank] = {}, stride[kTransposeMaxRank] = {}, ostride[kTransposeMaxRank] = {};
  transpose_output(s, out, stride);
  const int last = s.rank - 1;
  int p = 0;
  while (s.perm[p] != last) ++p;  // where the input's last axis (stride 1) went; not `last`
  for (int64_t k = last, r = 1; k >= 0; --k) ostride[k] = r, r *= out[k];
  const int64_t p_tiles = (out[p] + kTile - 1) / kTile, j_tiles = (out[last] + kTile - 1) / kTile;
  int64_t rest = 1;
  for (int k = 0; k < last; ++k)
    if (k != p) rest *= out[k];
  const int64_t tasks = rest * p_tiles;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && tasks > 1)
  for (int64_t t = 0; t < tasks; ++t) {
    int64_t in_base = 0, out_base = 0, r = t / p_tiles;
    for (int k = last - 1; k >= 0; --k) {
      if (k == p) continue;
      in_base += (r % out[k]) * stride[k];
      out_base += (r % out[k]) * ostride[k];
      r /= out[k];
    }
    const int64_t a0 = t % p_tiles * kTile, a1 = std::min(a0 + kTile, out[p]);
    for (int64_t jt = 0; jt < j_tiles; ++jt) {
      const int64_t j0 = jt * kTile, j1 = std::min(j0 + kTile, out[last]);
      for (int64_t a = a0; a < a1; ++a) {
        const float* src = x + in_base + a;
        float* dst = y + out_base + a * ostride[p];
        for (int64_t j = j0; j < j1; ++j) dst[j] = src[j * stride[last]];
      }
    }
  }
}

}  // namespace

void transpose_reference(const TransposeShape& s, const float* x, float* y) {
  int64_t out[kTransposeMaxRank] = {}, stride[kTransposeMaxRank] = {}, idx[kTransposeMaxRank] = {};
  transpose_output(s, out, stride);
  const int64_t n = transpose_elements(s);
  for (int64_t o = 0; o < n; ++o) {
    int64_t in = 0;
    for (int k = 0; k < s.rank; ++k) in += idx[k] * stride[k];
    y[o] = x[in];
    for (int k = s.rank - 1; k >= 0; --k) {
      if (++idx[k] < out[k]) break;
      idx[k] = 0;
    }
  }
}

void transpose(const TransposeShape& s, const float* x, float* y, int threads) {
  const TransposeShape m = merged(s);
  if (m.rank >= 2 && m.perm[m.rank - 1] != m.rank - 1) {
    // Tiles pay once an output row's strided reads span more than L1 (a 64 x 64 head's
    // kᵀ, 16 KiB, ran 30% slower tiled; BigGAN's 4096 x 1024 betaᵀ 57 -> 23-34 ms).
    int64_t out[kTransposeMaxRank] = {}, stride[kTransposeMaxRank] = {};
    transpose_output(m, out, stride);
    if (out[m.rank - 1] * stride[m.rank - 1] > 8192) return transpose_tiled(m, x, y, threads);
  }
  walk(m, threads, [&](int64_t o, int64_t in) { y[o] = x[in]; });
}

void transpose_backward(const TransposeShape& s, const float* dy, float* dx, bool accumulate, int threads) {
  // Output element o came from input element in: each dx element is written once.
  if (accumulate) walk(merged(s), threads, [&](int64_t o, int64_t in) { dx[in] += dy[o]; });
  else walk(merged(s), threads, [&](int64_t o, int64_t in) { dx[in] = dy[o]; });
}

}  // namespace edgegan::cpu
