// The shape of a reduction over some storage axes of a tensor (ONNX ReduceSum, ReduceMean,
// ReduceMax, ReduceL2 with keepdims): the input's dims and which of them are reduced; the
// output has the same rank with those dims 1. Both backends' reduce kernels take it.
#pragma once

#include <cstdint>

namespace edgegan::kernels {

enum class ReduceOp : int { kSum = 0, kMean = 1, kMax = 2, kL2 = 3 };

inline constexpr int kReduceMaxRank = 8;

struct ReduceShape {
  int rank = 0;
  int64_t dims[kReduceMaxRank] = {};
  bool reduced[kReduceMaxRank] = {};
};

inline int64_t reduce_input_elements(const ReduceShape& s) {
  int64_t n = 1;
  for (int k = 0; k < s.rank; ++k) n *= s.dims[k];
  return n;
}
inline int64_t reduce_output_elements(const ReduceShape& s) {
  int64_t n = 1;
  for (int k = 0; k < s.rank; ++k) n *= s.reduced[k] ? 1 : s.dims[k];
  return n;
}
// Elements folded into each output value.
inline int64_t reduce_count(const ReduceShape& s) { return reduce_input_elements(s) / reduce_output_elements(s); }

// The reduced axes as one contiguous block: the input is [outer, reduce, inner] and the
// output [outer, inner] (pixel norm over channels: inner 1; squeeze-and-excitation over
// H x W of NHWC: outer the batch, inner the channels). False when kept axes sit between
// reduced ones (size-1 axes do not count).
struct ReduceBlock {
  int64_t outer = 1, reduce = 1, inner = 1;
};
inline bool reduce_block(const ReduceShape& s, ReduceBlock& b) {
  b = {};
  int first = -1, last = -1;
  for (int k = 0; k < s.rank; ++k)
    if (s.reduced[k] && s.dims[k] > 1) {
      if (first < 0) first = k;
      last = k;
    }
  if (first < 0) first = last = s.rank;  // nothing of size > 1 reduced
  for (int k = 0; k < s.rank; ++k) {
    if (k < first) b.outer *= s.dims[k];
    else if (k > last) b.inner *= s.dims[k];
    else if (s.reduced[k]) b.reduce *= s.dims[k];
    else if (s.dims[k] > 1) return false;
  }
  return true;
}

}  // namespace edgegan::kernels

namespace edgegan::cpu {
using namespace kernels;
}  // namespace edgegan::cpu
