// The shape of a permutation of a tensor's storage axes (ONNX Transpose, in storage
// terms): output axis i is input axis perm[i]. Both backends' transpose kernels take it.
#pragma once

#include <cstdint>

namespace edgegan::kernels {

inline constexpr int kTransposeMaxRank = 8;

struct TransposeShape {
  int rank = 0;
  int64_t in[kTransposeMaxRank] = {};  // input dims
  int perm[kTransposeMaxRank] = {};
};

inline int64_t transpose_elements(const TransposeShape& s) {
  int64_t n = 1;
  for (int k = 0; k < s.rank; ++k) n *= s.in[k];
  return n;
}
// Output dims, and per output axis the input's stride along it.
inline void transpose_output(const TransposeShape& s, int64_t* out_dims, int64_t* in_strides) {
  int64_t stride[kTransposeMaxRank];
  int64_t r = 1;
  for (int k = s.rank - 1; k >= 0; --k) stride[k] = r, r *= s.in[k];
  for (int k = 0; k < s.rank; ++k) out_dims[k] = s.in[s.perm[k]], in_strides[k] = stride[s.perm[k]];
}

}  // namespace edgegan::kernels

namespace edgegan::cpu {
using namespace kernels;
}  // namespace edgegan::cpu
