#include "kernels_cuda/transpose/transpose.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "kernels_cuda/common/cuda_check.h"

namespace edgegan::cuda {
namespace {

constexpr int kThreads = 256;
int blocks_for(long long n) { return static_cast<int>(std::max<long long>(1, std::min<long long>((n + kThreads - 1) / kThreads, 1 << 20))); }

struct Gather {
  int rank = 0;
  long long out[kernels::kTransposeMaxRank] = {};
  long long stride[kernels::kTransposeMaxRank] = {};
};

__global__ void transpose_kernel(long long n, Gather g, const float* __restrict__ x, float* __restrict__ y) {
  for (long long o = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; o < n; o += static_cast<long long>(gridDim.x) * blockDim.x) {
    long long in = 0, rest = o;
    for (int k = g.rank - 1; k >= 0; --k) {
      in += (rest % g.out[k]) * g.stride[k];
      rest /= g.out[k];
    }
    y[o] = x[in];
  }
}

}  // namespace

void transpose(const kernels::TransposeShape& s, const float* x, float* y, cudaStream_t stream) {
  const long long n = kernels::transpose_elements(s);
  if (n <= 0) return;
  Gather g;
  g.rank = s.rank;
  int64_t out[kernels::kTransposeMaxRank], stride[kernels::kTransposeMaxRank];
  kernels::transpose_output(s, out, stride);
  for (int k = 0; k < s.rank; ++k) g.out[k] = out[k], g.stride[k] = stride[k];
  transpose_kernel<<<blocks_for(n), kThreads, 0, stream>>>(n, g, x, y);
  check_cuda(cudaGetLastError(), "transpose launch");
}

}  // namespace edgegan::cuda
