#include "kernels_cuda/reduce/reduce.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "kernels_cuda/common/cuda_check.h"

namespace edgegan::cuda {
namespace {

constexpr int kThreads = 256;
int blocks_for(long long n) { return static_cast<int>(std::max<long long>(1, std::min<long long>((n + kThreads - 1) / kThreads, 1 << 20))); }

// Output o's elements: its kept coordinates fixed, the reduced ones walked in index order.
__global__ void reduce_kernel(long long outputs, long long count, kernels::ReduceShape s, kernels::ReduceOp op, const float* __restrict__ x,
                              float* __restrict__ y) {
  for (long long o = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; o < outputs; o += static_cast<long long>(gridDim.x) * blockDim.x) {
    long long stride[kernels::kReduceMaxRank], r = 1, base = 0, rest = o;
    for (int k = s.rank - 1; k >= 0; --k) stride[k] = r, r *= s.dims[k];
    for (int k = s.rank - 1; k >= 0; --k) {
      if (s.reduced[k]) continue;
      base += (rest % s.dims[k]) * stride[k];
      rest /= s.dims[k];
    }
    float acc = op == kernels::ReduceOp::kMax ? -INFINITY : 0.f;
    for (long long i = 0; i < count; ++i) {
      long long off = base, q = i;
      for (int k = s.rank - 1; k >= 0; --k) {
        if (!s.reduced[k]) continue;
        off += (q % s.dims[k]) * stride[k];
        q /= s.dims[k];
      }
      const float v = x[off];
      if (op == kernels::ReduceOp::kMax) acc = v > acc || isnan(v) ? v : acc;
      else if (op == kernels::ReduceOp::kL2) acc += v * v;
      else acc += v;
    }
    y[o] = op == kernels::ReduceOp::kMean ? acc / static_cast<float>(count) : op == kernels::ReduceOp::kL2 ? sqrtf(acc) : acc;
  }
}

}  // namespace

void reduce(const kernels::ReduceShape& s, kernels::ReduceOp op, const float* x, float* y, cudaStream_t stream) {
  const long long outputs = kernels::reduce_output_elements(s);
  if (outputs <= 0) return;
  reduce_kernel<<<blocks_for(outputs), kThreads, 0, stream>>>(outputs, kernels::reduce_count(s), s, op, x, y);
  check_cuda(cudaGetLastError(), "reduce launch");
}

}  // namespace edgegan::cuda
