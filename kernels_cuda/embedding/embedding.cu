#include "kernels_cuda/embedding/embedding.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "kernels_cuda/common/cuda_check.h"

namespace edgegan::cuda {
namespace {

__global__ void embedding_kernel(long long count, const long long* __restrict__ indices, long long rows, int dim, const float* __restrict__ table,
                                 float* __restrict__ y, IndexError* error) {
  const long long total = count * dim;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long k = i / dim;
    const long long index = indices[k];
    if (index < 0 || index >= rows) {
      y[i] = 0.f;
      // The lowest position wins, whatever the order threads get here (-1 is the largest unsigned).
      if (i % dim == 0) atomicMin(reinterpret_cast<unsigned long long*>(&error->position), static_cast<unsigned long long>(k));
      continue;
    }
    y[i] = table[index * dim + i % dim];
  }
}

__global__ void record_value(const long long* indices, IndexError* error) {
  if (error->position >= 0) error->value = indices[error->position];
}

}  // namespace

void embedding_lookup(long long count, const long long* indices, long long rows, int dim, const float* table, float* y, IndexError* error,
                      cudaStream_t stream) {
  const long long total = count * dim;
  if (total <= 0) return;
  check_cuda(cudaMemsetAsync(error, 0xff, sizeof(IndexError), stream), "embedding error reset");
  embedding_kernel<<<static_cast<int>(std::min<long long>((total + 255) / 256, 1 << 20)), 256, 0, stream>>>(count, indices, rows, dim, table,
                                                                                                             y, error);
  record_value<<<1, 1, 0, stream>>>(indices, error);
  check_cuda(cudaGetLastError(), "embedding launch");
}

}  // namespace edgegan::cuda
