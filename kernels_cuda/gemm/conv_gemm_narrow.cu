// The narrow implicit GEMM (kNarrow, kNarrowGroup8, kNarrowWarp): heads with 1-4
// output channels.
#include <mutex>

#include "kernels_cuda/common/cuda_check.h"
#include "kernels_cuda/gemm/conv_gemm_device.cuh"

namespace edgegan::cuda::conv_gemm_detail {
namespace {

// Heads with 1-4 output channels: a group of G lanes per output pixel, each lane
// taking every G-th group of 4 input channels, summed across the group by a fixed
// butterfly (deterministic). A task's weights, padded to 4 columns, are staged in
// shared memory when they fit, so the inner loop is one float4 of x against four
// float4s of weights. Many pixels: G = 1 (neighbouring threads read neighbouring
// pixels); few pixels with deep inputs: G = 8 or 32 split the reduction.
// Up to 96 KB of dynamic shared memory (sm_87 and sm_90 allow 163 and 227 KB per
// block): a 9x9x32 or 7x7x64 head's taps (41 and 49 KB) stay staged. Beyond the
// 32 KB of a static array, the weights were read from global memory per element: 8x
// slower on those two heads.

template <int G, typename WT>
__global__ void __launch_bounds__(kThreads) conv_gemm_narrow(Params p) {
  extern __shared__ __align__(16) float staged[];  // [tap][ci][4], p.staged_floats
  const int task = blockIdx.y;
  const ConvGemmTask& t = p.tasks[task];
  const WT* weights = static_cast<const WT*>(p.weights);
  const int taps = t.taps_h * t.taps_w;
  const bool use_staged = static_cast<long long>(taps) * p.cin * 4 <= p.staged_floats;
  if (use_staged) {
    for (int i = threadIdx.x; i < taps * p.cin * 4; i += blockDim.x) {
      const int co = i & 3, ci = (i >> 2) % p.cin, tap = (i >> 2) / p.cin;
      staged[i] = co < p.cout ? weight_at(weights, t.weights + static_cast<long long>(tap) * p.cin * p.cout + panel_index(p, ci, co)) : 0.f;
    }
  }
  __syncthreads();
  const int qhw = t.q_count_h * t.q_count_w;
  const long long M = static_cast<long long>(p.batch) * qhw;
  const long long m = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / G;
  const int lane = threadIdx.x % G;
  // Lanes past the end still take part in the butterfly (every lane of the warp must).
  const bool valid = m < M;
  const int n = valid ? static_cast<int>(m / qhw) : 0;
  const int r = valid ? static_cast<int>(m % qhw) : 0;
  const int bh = (t.q_begin_h + r / t.q_count_w) * t.in_step_h, bw = (t.q_begin_w + r % t.q_count_w) * t.in_step_w;
  const bool vec = use_staged && (p.cin & 3) == 0;
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  for (int th = 0; valid && th < t.taps_h; ++th) {
    const int ih = bh + t.tap_offset_h[th];
    if (ih < 0 || ih >= p.in_h) continue;
    for (int tw = 0; tw < t.taps_w; ++tw) {
      const int iw = bw + t.tap_offset_w[tw];
      if (iw < 0 || iw >= p.in_w) continue;
      const int tap = th * t.taps_w + tw;
      const float* xp = p.x + ((static_cast<long long>(n) * p.in_h + ih) * p.in_w + iw) * p.cin;
      if (vec) {
        const float* wt = staged + static_cast<long long>(tap) * p.cin * 4;
        for (int ci = lane * 4; ci < p.cin; ci += 4 * G) {
          const float4 xv = __ldg(reinterpret_cast<const float4*>(xp + ci));
          const float xs[4] = {xv.x, xv.y, xv.z, xv.w};
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const float4 w = *reinterpret_cast<const float4*>(wt + (ci + j) * 4);
            acc[0] = fmaf(xs[j], w.x, acc[0]);
            acc[1] = fmaf(xs[j], w.y, acc[1]);
            acc[2] = fmaf(xs[j], w.z, acc[2]);
            acc[3] = fmaf(xs[j], w.w, acc[3]);
          }
        }
      } else {
        const long long wbase = t.weights + static_cast<long long>(tap) * p.cin * p.cout;
        for (int ci = lane; ci < p.cin; ci += G) {
          const float xv = __ldg(xp + ci);
#pragma unroll
          for (int co = 0; co < 4; ++co)
            if (co < p.cout)
              acc[co] = fmaf(xv, use_staged ? staged[(tap * p.cin + ci) * 4 + co] : weight_at(weights, wbase + panel_index(p, ci, co)), acc[co]);
        }
      }
    }
  }
  if (G > 1) {
#pragma unroll
    for (int off = G / 2; off > 0; off /= 2)
#pragma unroll
      for (int co = 0; co < 4; ++co) acc[co] += __shfl_xor_sync(0xffffffffu, acc[co], off, G);
  }
  if (valid && lane == 0)
    for (int co = 0; co < p.cout; ++co) store_output(p, t, task, 0, m, co, acc[co]);
}

// One thread (or lane group) per item, no stride loop: every item needs its block.
unsigned blocks_covering(long long n, int threads) { return static_cast<unsigned>((n + threads - 1) / threads); }

}  // namespace

template <typename WT>
void launch_narrow(const Params& p, ConvGemmLaunch::Kind kind, unsigned tasks, cudaStream_t stream) {
  switch (kind) {
    case ConvGemmLaunch::Kind::kNarrow:
      conv_gemm_narrow<1, WT><<<dim3(blocks_covering(p.max_pixels, kThreads), tasks), kThreads, p.staged_floats * 4, stream>>>(p);
      break;
    case ConvGemmLaunch::Kind::kNarrowGroup8:
      conv_gemm_narrow<8, WT><<<dim3(blocks_covering(p.max_pixels * 8, kThreads), tasks), kThreads, p.staged_floats * 4, stream>>>(p);
      break;
    case ConvGemmLaunch::Kind::kNarrowWarp:
      conv_gemm_narrow<32, WT><<<dim3(blocks_covering(p.max_pixels * 32, kThreads), tasks), kThreads, p.staged_floats * 4, stream>>>(p);
      break;
    default: throw CudaError("conv_gemm: launch_narrow given a kind of another family");
  }
}

template void launch_narrow<float>(const Params&, ConvGemmLaunch::Kind, unsigned, cudaStream_t);
template void launch_narrow<__half>(const Params&, ConvGemmLaunch::Kind, unsigned, cudaStream_t);

// Lets every narrow kernel take kNarrowStagedBytesMax of dynamic shared memory (past the
// default 48 KB); once per process, when the first head is planned (not while a graph
// is being recorded).
void allow_narrow_staging() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto allow = [](const void* kernel) {
      check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kNarrowStagedBytesMax), "narrow head shared memory");
    };
    allow(reinterpret_cast<const void*>(&conv_gemm_narrow<1, float>));
    allow(reinterpret_cast<const void*>(&conv_gemm_narrow<8, float>));
    allow(reinterpret_cast<const void*>(&conv_gemm_narrow<32, float>));
    allow(reinterpret_cast<const void*>(&conv_gemm_narrow<1, __half>));
    allow(reinterpret_cast<const void*>(&conv_gemm_narrow<8, __half>));
    allow(reinterpret_cast<const void*>(&conv_gemm_narrow<32, __half>));
  });
}

}  // namespace edgegan::cuda::conv_gemm_detail
