// Embedding lookup on the GPU: y[i] = table[indices[i]].
#pragma once

#include <cuda_runtime_api.h>

namespace edgegan::cuda {

// Where the first out-of-range index was found (device memory; position -1: none).
// The host copies it back after the run.
struct IndexError {
  long long position;
  long long value;
};

// Rows of an index outside 0..rows-1 are written as zeros and the first such index
// is recorded in *error (reset by the run itself).
void embedding_lookup(long long count, const long long* indices, long long rows, int dim, const float* table, float* y, IndexError* error,
                      cudaStream_t stream);

}  // namespace edgegan::cuda
