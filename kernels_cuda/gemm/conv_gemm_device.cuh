// Device code the kernel families share: weight reads, the output addressing and
// epilogue, the live-tap search, and the TF32 mma helpers. In an anonymous namespace,
// as when all families were one file: each file gets its own internal copy, so the
// compiler inlines and schedules them as before.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "kernels_cuda/common/activation.cuh"
#include "kernels_cuda/gemm/conv_gemm_internal.h"

namespace edgegan::cuda::conv_gemm_detail {
namespace {

__device__ __forceinline__ float weight_at(const float* w, long long i) { return __ldg(w + i); }
__device__ __forceinline__ float weight_at(const __half* w, long long i) { return __half2float(w[i]); }

// Element (row, col) of one tap's Cin x Cout matrix stored in column panels.
__device__ __forceinline__ long long panel_index(const Params& p, int row, int col) {
  const int p0 = col / p.panel * p.panel;
  const int width = min(p.panel, p.cout - p0);
  return static_cast<long long>(p0) * p.cin + static_cast<long long>(row) * width + (col - p0);
}

// Output pixel m of a task: its image and the address of its first channel in y.
__device__ __forceinline__ long long output_offset(const Params& p, const ConvGemmTask& t, long long m) {
  const int qhw = t.q_count_h * t.q_count_w;
  const int n = static_cast<int>(m / qhw);
  const int r = static_cast<int>(m % qhw);
  const int oh = (t.q_begin_h + r / t.q_count_w) * t.out_step_h + t.out_base_h;
  const int ow = (t.q_begin_w + r % t.q_count_w) * t.out_step_w + t.out_base_w;
  return ((static_cast<long long>(n) * p.out_h + oh) * p.out_w + ow) * p.cout;
}

__device__ __forceinline__ void store_output(const Params& p, const ConvGemmTask& t, int task, int split, long long m, int col, float v) {
  if (p.k_splits > 1) {
    p.partials[((static_cast<long long>(split) * p.task_count + task) * p.max_pixels + m) * p.cout + col] = v;
    return;
  }
  if (p.bias) v += __ldg(p.bias + col);
  const long long at = output_offset(p, t, m) + col;
  p.y[at] = activate(v, p.activation) + (p.residual ? p.residual[at] : 0.f);
}

// One tap a block reads: its input offsets and where its Cin x Cout matrix starts.
struct LiveTap {
  int dh, dw;
  long long weights;
};

// Lists, in live[], the taps that at least one pixel of the block's rows reads inside
// the input. Rows [m0, m0 + rows), one per participating thread.
__device__ void find_live_taps(const Params& p, const ConvGemmTask& t, long long m0, int rows, LiveTap* live, int* live_count) {
  __shared__ int live_h[kMaxTapsPerAxis], live_w[kMaxTapsPerAxis];
  const int tid = threadIdx.x;
  if (tid < kMaxTapsPerAxis) live_h[tid] = live_w[tid] = 0;
  __syncthreads();
  const long long M = static_cast<long long>(p.batch) * t.q_count_h * t.q_count_w;
  for (int row = tid; row < rows; row += blockDim.x) {
    const long long m = m0 + row;
    if (m >= M) break;
    const int r = static_cast<int>(m % (t.q_count_h * t.q_count_w));
    const int bh = (t.q_begin_h + r / t.q_count_w) * t.in_step_h, bw = (t.q_begin_w + r % t.q_count_w) * t.in_step_w;
    for (int th = 0; th < t.taps_h; ++th) {
      const int ih = bh + t.tap_offset_h[th];
      if (ih >= 0 && ih < p.in_h) live_h[th] = 1;  // every writer stores the same value
    }
    for (int tw = 0; tw < t.taps_w; ++tw) {
      const int iw = bw + t.tap_offset_w[tw];
      if (iw >= 0 && iw < p.in_w) live_w[tw] = 1;
    }
  }
  __syncthreads();
  if (tid == 0) {
    int count = 0;
    for (int th = 0; th < t.taps_h; ++th)
      for (int tw = 0; tw < t.taps_w; ++tw)
        if (live_h[th] && live_w[tw])
          live[count++] = {t.tap_offset_h[th], t.tap_offset_w[tw], t.weights + static_cast<long long>(th * t.taps_w + tw) * p.cin * p.cout};
    *live_count = count;
  }
  __syncthreads();
}

// Tensor cores (sm_80 and later: Orin, Hopper): mma.sync m16n8k8 on TF32 operands
// (10-bit mantissas, as cuDNN's default) with FP32 accumulation. (Splitting each operand
// into three TF32 products was tried for FP32 accuracy: the tensor cores' internal
// accumulation still left 3e-4 on deep sums, over the 1e-4 tolerance, and it ran slower
// than the FMA tiles.)
enum Math { kFma = 0, kTf32 = 1 };

__device__ __forceinline__ uint32_t to_tf32(float x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}

__device__ __forceinline__ void mma_tf32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// The epilogue of a warp's 64 x 32 block of m16n8k8 accumulators (both tensor-core
// kernels): rows wm*64 + mi*16 + {g, g+8}, columns wn*32 + ni*8 + 2*q + {0, 1}.
__device__ __forceinline__ void store_mma_tiles(const Params& p, const ConvGemmTask& t, int task, int split, long long M, long long m0, int n0,
                                                int wm, int wn, int g, int q, const float* acc) {
#pragma unroll
  for (int mi = 0; mi < 4; ++mi)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const long long m = m0 + wm * 64 + mi * 16 + g + half * 8;
      if (m >= M) continue;
#pragma unroll
      for (int ni = 0; ni < 4; ++ni)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int col = n0 + wn * 32 + ni * 8 + 2 * q + e;
          if (col < p.cout) store_output(p, t, task, split, m, col, acc[(mi * 4 + ni) * 4 + half * 2 + e]);
        }
    }
}

}  // namespace
}  // namespace edgegan::cuda::conv_gemm_detail
