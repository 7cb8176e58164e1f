// Embedding (a conditional GAN's label lookup): y[k, :] = table[indices[k], :].
#pragma once

#include <cstdint>

namespace edgegan::cpu {

// For k < count. Indices must already be checked to lie in [0, rows) (the engine
// does so before any parallel work starts).
void embedding_lookup(int64_t count, const int64_t* indices, int64_t dim, const float* table, float* y);

// dtable (rows x dim, overwritten) gets every dy row added to its index's row, in k
// order (deterministic). Indices must be in range.
void embedding_backward(int64_t count, const int64_t* indices, int64_t rows, int64_t dim, const float* dy, float* dtable);

}  // namespace edgegan::cpu
