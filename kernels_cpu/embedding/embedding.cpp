#include "kernels_cpu/embedding/embedding.h"

#include <algorithm>

namespace edgegan::cpu {

void embedding_lookup(int64_t count, const int64_t* indices, int64_t dim, const float* table, float* y) {
  for (int64_t k = 0; k < count; ++k) {
    const float* row = table + indices[k] * dim;
    std::copy(row, row + dim, y + k * dim);
  }
}

void embedding_backward(int64_t count, const int64_t* indices, int64_t rows, int64_t dim, const float* dy, float* dtable) {
  std::fill(dtable, dtable + rows * dim, 0.f);
  for (int64_t k = 0; k < count; ++k) {
    float* row = dtable + indices[k] * dim;
    for (int64_t d = 0; d < dim; ++d) row[d] += dy[k * dim + d];
  }
}

}  // namespace edgegan::cpu
