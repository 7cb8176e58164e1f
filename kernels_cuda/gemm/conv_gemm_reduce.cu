// The split-K reduction of the implicit GEMM: the partial products of every split,
// summed in split order (no atomics), then bias, activation and residual.
#include <algorithm>

#include "kernels_cuda/common/cuda_check.h"
#include "kernels_cuda/gemm/conv_gemm_device.cuh"

namespace edgegan::cuda::conv_gemm_detail {
namespace {

// Split K: sums the partial products in split order, then bias and activation.
__global__ void conv_gemm_reduce(Params p) {
  const long long per_task = p.max_pixels * p.cout;
  const long long total = per_task * p.task_count;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const int task = static_cast<int>(i / per_task);
    const long long m = (i % per_task) / p.cout;
    const int col = static_cast<int>(i % p.cout);
    const ConvGemmTask& t = p.tasks[task];
    if (m >= static_cast<long long>(p.batch) * t.q_count_h * t.q_count_w) continue;
    float v = 0.f;
    for (int s = 0; s < p.k_splits; ++s) v += p.partials[(static_cast<long long>(s) * p.task_count) * per_task + i];
    if (p.bias) v += __ldg(p.bias + col);
    const long long at = output_offset(p, t, m) + col;
    p.y[at] = activate(v, p.activation) + (p.residual ? p.residual[at] : 0.f);
  }
}

// Grid-stride kernels (the reduce): enough blocks to fill the GPU, capped.
int blocks_for(long long n, int threads) { return static_cast<int>(std::min<long long>((n + threads - 1) / threads, 1 << 20)); }

}  // namespace

void launch_reduce(const Params& p, cudaStream_t stream) {
  conv_gemm_reduce<<<blocks_for(p.max_pixels * p.cout * p.task_count, kThreads), kThreads, 0, stream>>>(p);
}

}  // namespace edgegan::cuda::conv_gemm_detail
