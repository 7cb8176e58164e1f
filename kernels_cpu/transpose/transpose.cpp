#include "kernels_cpu/transpose/transpose.h"

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
  walk(merged(s), threads, [&](int64_t o, int64_t in) { y[o] = x[in]; });
}

void transpose_backward(const TransposeShape& s, const float* dy, float* dx, bool accumulate, int threads) {
  // Output element o came from input element in: each dx element is written once.
  if (accumulate) walk(merged(s), threads, [&](int64_t o, int64_t in) { dx[in] += dy[o]; });
  else walk(merged(s), threads, [&](int64_t o, int64_t in) { dx[in] = dy[o]; });
}

}  // namespace edgegan::cpu
