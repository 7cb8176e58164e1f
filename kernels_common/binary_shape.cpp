#include "kernels_common/binary_shape.h"

#include <algorithm>

namespace edgegan::kernels {

int64_t binary_elements(const int64_t* dims, int rank) {
  int64_t n = 1;
  for (int k = 0; k < rank; ++k) n *= dims[k];
  return n;
}

bool binary_shape_valid(const BinaryShape& s) {
  if (s.rank < 0 || s.rank > kBinaryMaxRank) return false;
  for (int k = 0; k < s.rank; ++k) {
    if (s.out[k] < 1 || s.a[k] < 1 || s.b[k] < 1) return false;
    if ((s.a[k] != s.out[k] && s.a[k] != 1) || (s.b[k] != s.out[k] && s.b[k] != 1)) return false;
    if (s.out[k] != std::max(s.a[k], s.b[k])) return false;
  }
  return true;
}

}  // namespace edgegan::kernels
