#include "kernels_cuda/group_norm/group_norm.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "kernels_cuda/common/activation.cuh"
#include "kernels_cuda/common/cuda_check.h"

namespace edgegan::cuda {
namespace {

constexpr int kStatThreads = 512;
// Elements a thread sums in float before folding the partial into its double total:
// short float runs keep the rounding small, the fold keeps double additions rare
// (FP64 is slow on Jetson-class GPUs).
constexpr int kFloatRun = 16;
constexpr int kApplyThreads = 256;

// The block's sum of one double per thread, in a fixed tree: thread 0 returns it.
__device__ double block_sum(double v, double* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int half = kStatThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) shared[threadIdx.x] += shared[threadIdx.x + half];
    __syncthreads();
  }
  const double total = shared[0];
  __syncthreads();  // the array is reused by the next sum
  return total;
}

// Per (image, group): the statistics as the apply pass reads them. Sums are of
// x - ref, ref the group's first element, so a mean far beyond the spread costs no
// accuracy (the CPU shifts its sums alike). stats[3 * ng]: ref, mean - ref (rounded),
// 1 / sqrt(var + epsilon).
__global__ void __launch_bounds__(kStatThreads) statistics_kernel(GroupNormGeometry g, const float* __restrict__ x, float epsilon,
                                                                   float* __restrict__ stats) {
  __shared__ double shared[kStatThreads];
  const int ng = blockIdx.x, n = ng / g.groups, group = ng % g.groups;
  const int cg = g.channels / g.groups;
  const long long count = g.pixels * cg;
  const float* base = x + static_cast<long long>(n) * g.pixels * g.channels + static_cast<long long>(group) * cg;
  const float ref = base[0];
  // Element i of the group: pixel i / cg, channel i % cg.
  auto at = [&](long long i) { return base[(i / cg) * g.channels + i % cg]; };

  double total = 0;
  float run = 0.f;
  int in_run = 0;
  for (long long i = threadIdx.x; i < count; i += kStatThreads) {
    run += at(i) - ref;
    if (++in_run == kFloatRun) total += run, run = 0.f, in_run = 0;
  }
  total += run;
  const double shifted_mean = block_sum(total, shared) / static_cast<double>(count);  // mean - ref
  const float mref = static_cast<float>(shifted_mean);

  double squares = 0;
  run = 0.f, in_run = 0;
  for (long long i = threadIdx.x; i < count; i += kStatThreads) {
    const float d = (at(i) - ref) - mref;
    run = fmaf(d, d, run);
    if (++in_run == kFloatRun) squares += run, run = 0.f, in_run = 0;
  }
  squares += run;
  // The deviations were taken from mref, not the exact mean: remove the offset's share.
  const double offset = shifted_mean - static_cast<double>(mref);
  const double var = fmax(0.0, block_sum(squares, shared) / static_cast<double>(count) - offset * offset);
  if (threadIdx.x == 0) {
    stats[3 * ng] = ref;
    stats[3 * ng + 1] = mref;
    stats[3 * ng + 2] = static_cast<float>(1.0 / sqrt(var + static_cast<double>(epsilon)));
  }
}

__global__ void apply_kernel(GroupNormGeometry g, const float* x, const float* __restrict__ scale, const float* __restrict__ shift,
                             const float* __restrict__ stats, float* y, ActivationParams activation, const float* residual) {
  const long long total = static_cast<long long>(g.batch) * g.pixels * g.channels;
  const int cg = g.channels / g.groups;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const int c = static_cast<int>(i % g.channels);
    const long long n = i / (g.pixels * g.channels);
    const float* s = stats + 3 * (n * g.groups + c / cg);
    const float a = s[2] * __ldg(scale + c);
    float v = activate(fmaf((x[i] - s[0]) - s[1], a, __ldg(shift + c)), activation);
    if (residual) v += residual[i];
    y[i] = v;
  }
}

}  // namespace

long long group_norm_workspace_floats(const GroupNormGeometry& g) { return 3LL * g.batch * g.groups; }

void group_norm(const GroupNormGeometry& g, const float* x, const float* scale, const float* shift, float epsilon, float* y,
                ActivationParams activation, const float* residual, float* workspace, cudaStream_t stream) {
  const long long total = static_cast<long long>(g.batch) * g.pixels * g.channels;
  if (total <= 0) return;
  statistics_kernel<<<g.batch * g.groups, kStatThreads, 0, stream>>>(g, x, epsilon, workspace);
  check_cuda(cudaGetLastError(), "group norm statistics launch");
  const int blocks = static_cast<int>(std::min<long long>((total + kApplyThreads - 1) / kApplyThreads, 1 << 20));
  apply_kernel<<<blocks, kApplyThreads, 0, stream>>>(g, x, scale, shift, workspace, y, activation, residual);
  check_cuda(cudaGetLastError(), "group norm apply launch");
}

}  // namespace edgegan::cuda
