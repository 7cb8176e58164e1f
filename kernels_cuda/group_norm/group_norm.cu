#include "kernels_cuda/group_norm/group_norm.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "kernels_cuda/common/activation.cuh"
#include "kernels_cuda/common/cuda_check.h"

namespace edgegan::cuda {
namespace {

constexpr int kStatThreads = 256;
// Elements a thread sums in float before folding the partial into its double total:
// short float runs keep the rounding small, the fold keeps double additions rare
// (FP64 is slow on Jetson-class GPUs).
constexpr int kFloatRun = 16;
constexpr int kApplyThreads = 256;
// Pixels per chunk at least, and blocks per multiprocessor aimed at by the chunking.
constexpr long long kMinChunkPixels = 32;
constexpr int kBlocksPerMultiprocessor = 4;

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

// Pass 1, one block per (chunk of pixels, image): per channel, the sum and the sum of
// squares of x - ref over the chunk, ref being the channel's group's first element (so
// a mean far beyond the spread costs no accuracy; the CPU shifts its sums alike).
// Consecutive threads read consecutive channels of a pixel (coalesced, whatever the
// group size; one block per group read a 64-channel InstanceNorm with a stride of 64
// floats and a 1-group norm with one block for the whole image). partials[n][chunk][c][2].
__global__ void __launch_bounds__(kStatThreads) partial_sums_kernel(GroupNormGeometry g, const float* __restrict__ x,
                                                                     double* __restrict__ partials) {
  __shared__ double shared[2][kStatThreads];
  const int chunk = blockIdx.x, n = blockIdx.y;
  const int cg = g.channels / g.groups;
  const long long per_chunk = (g.pixels + g.chunks - 1) / g.chunks;
  const long long p0 = chunk * per_chunk, p1 = min(g.pixels, p0 + per_chunk);
  const float* image = x + static_cast<long long>(n) * g.pixels * g.channels;
  double* out = partials + (static_cast<long long>(n) * g.chunks + chunk) * g.channels * 2;
  // rows threads per channel when the channels do not fill the block, else one.
  const int rows = g.channels >= kStatThreads ? 1 : kStatThreads / g.channels;
  for (int c0 = 0; c0 < g.channels; c0 += kStatThreads) {
    const int t = threadIdx.x;
    const int c = rows == 1 ? c0 + t : t % g.channels, r = rows == 1 ? 0 : t / g.channels;
    double sum = 0, squares = 0;
    if (c < g.channels && r < rows) {
      const float ref = __ldg(image + (c / cg) * cg);
      float run = 0.f, run_sq = 0.f;
      int in_run = 0;
      for (long long p = p0 + r; p < p1; p += rows) {
        const float d = __ldg(image + p * g.channels + c) - ref;
        run += d, run_sq = fmaf(d, d, run_sq);
        if (++in_run == kFloatRun) sum += run, squares += run_sq, run = run_sq = 0.f, in_run = 0;
      }
      sum += run, squares += run_sq;
    }
    if (rows == 1) {
      if (c < g.channels) out[2 * c] = sum, out[2 * c + 1] = squares;
      continue;
    }
    shared[0][t] = sum, shared[1][t] = squares;
    __syncthreads();
    if (t < g.channels) {  // the rows of channel t, in a fixed order
      double s = 0, q = 0;
      for (int k = 0; k < rows; ++k) s += shared[0][k * g.channels + t], q += shared[1][k * g.channels + t];
      out[2 * t] = s, out[2 * t + 1] = q;
    }
    break;  // every channel had a thread
  }
}

// Pass 2, one block per (image, group): the chunks' partial sums of the group's
// channels, in a fixed order, into stats[3 * ng]: ref, mean - ref (rounded),
// 1 / sqrt(var + epsilon).
__global__ void __launch_bounds__(kStatThreads) statistics_kernel(GroupNormGeometry g, const float* __restrict__ x,
                                                                   const double* __restrict__ partials, float epsilon, float* __restrict__ stats) {
  __shared__ double shared[kStatThreads];
  const int ng = blockIdx.x, n = ng / g.groups, group = ng % g.groups;
  const int cg = g.channels / g.groups;
  const long long entries = static_cast<long long>(g.chunks) * cg;
  const double* image = partials + static_cast<long long>(n) * g.chunks * g.channels * 2;
  double sum = 0, squares = 0;
  for (long long e = threadIdx.x; e < entries; e += kStatThreads) {
    const double* at = image + ((e / cg) * g.channels + group * cg + e % cg) * 2;
    sum += at[0], squares += at[1];
  }
  const double count = static_cast<double>(g.pixels) * cg;
  const double shifted_mean = block_sum(sum, shared) / count;  // mean - ref
  const double mean_square = block_sum(squares, shared) / count;
  if (threadIdx.x == 0) {
    const float mref = static_cast<float>(shifted_mean);
    // Variance about the mean from moments about ref (both in double), and the apply
    // pass subtracts the rounded mref: its offset from the exact mean is removed here.
    const double var = fmax(0.0, mean_square - shifted_mean * shifted_mean);
    stats[3 * ng] = x[static_cast<long long>(n) * g.pixels * g.channels + static_cast<long long>(group) * cg];
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

int group_norm_chunks(const GroupNormGeometry& g, int multiprocessors) {
  const long long wanted = (static_cast<long long>(multiprocessors) * kBlocksPerMultiprocessor + g.batch - 1) / g.batch;
  const long long most = std::max<long long>(1, g.pixels / kMinChunkPixels);
  return static_cast<int>(std::max<long long>(1, std::min({wanted, most, 65535LL})));
}

long long group_norm_workspace_floats(const GroupNormGeometry& g) {
  // The partial sums (two doubles per image, chunk and channel), then the statistics.
  return 4LL * g.batch * g.chunks * g.channels + 3LL * g.batch * g.groups;
}

void group_norm(const GroupNormGeometry& g, const float* x, const float* scale, const float* shift, float epsilon, float* y,
                ActivationParams activation, const float* residual, float* workspace, cudaStream_t stream) {
  const long long total = static_cast<long long>(g.batch) * g.pixels * g.channels;
  if (total <= 0) return;
  auto* partials = reinterpret_cast<double*>(workspace);
  float* stats = workspace + 4LL * g.batch * g.chunks * g.channels;
  partial_sums_kernel<<<dim3(g.chunks, g.batch), kStatThreads, 0, stream>>>(g, x, partials);
  check_cuda(cudaGetLastError(), "group norm partial sums launch");
  statistics_kernel<<<g.batch * g.groups, kStatThreads, 0, stream>>>(g, x, partials, epsilon, stats);
  check_cuda(cudaGetLastError(), "group norm statistics launch");
  const int blocks = static_cast<int>(std::min<long long>((total + kApplyThreads - 1) / kApplyThreads, 1 << 20));
  apply_kernel<<<blocks, kApplyThreads, 0, stream>>>(g, x, scale, shift, stats, y, activation, residual);
  check_cuda(cudaGetLastError(), "group norm apply launch");
}

}  // namespace edgegan::cuda
