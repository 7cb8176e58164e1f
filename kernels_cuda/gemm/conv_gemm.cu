#include "kernels_cuda/gemm/conv_gemm.h"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <mutex>
#include <type_traits>

#include "kernels_cuda/common/activation.cuh"
#include "kernels_cuda/common/cuda_check.h"

namespace edgegan::cuda {
namespace {

constexpr int kThreads = 256;  // 16 x 16 threads per tiled block

struct Params {
  int batch, in_h, in_w, cin, out_h, out_w, cout, panel;
  long long max_pixels;
  int task_count, k_splits;
  const float* x;
  float* y;
  const void* weights;
  const float* bias;
  ActivationParams activation;
  const float* residual;  // added after the activation (null: none)
  const ConvGemmTask* tasks;
  float* partials;  // split K: [split][task][max_pixels][cout]
  int staged_floats;  // narrow heads: the dynamic shared memory holding every tap's weights (0: none)
};

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

// BM x BM output tile per block, BK deep slices of K, slices double-buffered in
// shared memory (the next slice is fetched into registers while the current one is
// multiplied). Each thread fetches V groups of 4 consecutive channels of A and V groups
// of 4 consecutive columns of B per slice. kFma: TM x TM products per thread on the
// FP32 units (16 x 16 threads). kTf32 (128 x 128 x 16 tiles): 8 warps as 2 x 4, each a
// 64 x 32 block of 4 x 4 mma tiles; operands are rounded to TF32 once, when a slice is
// stored, and rows are padded by 8 words so that fragment reads hit 32 distinct banks.
// (64-wide tiles: 4 blocks per multiprocessor, i.e. at most 64 registers per thread.)
template <int BM, int BK, int TM, int MATH, typename WT>
__global__ void __launch_bounds__(kThreads, BM == 64 ? 4 : 1) conv_gemm_tiled(Params p) {
  static_assert(MATH == kFma || (BM == 128 && BK == 16), "the tensor-core tiles are 128 x 128 x 16");
  static_assert(MATH == kTf32 || BM == 16 * TM, "16 x 16 threads cover the tile");
  constexpr int BN = BM;
  constexpr int V = BM * BK / (kThreads * 4);  // float4 groups per thread per slice, of A and of B
  constexpr int KV = BK / 4;                   // threads along one A row
  constexpr int NV = BN / 4;                   // threads along one B row
  constexpr int PAD = MATH == kFma ? 4 : 8;
  static_assert(V >= 1 && BM * BK == V * kThreads * 4, "whole float4 groups per thread");
  __shared__ ConvGemmTask t;
  __shared__ __align__(16) float As[2][BK][BM + PAD];
  __shared__ __align__(16) float Bs[2][BK][BN + PAD];
  __shared__ LiveTap live[kMaxTapsPerAxis * kMaxTapsPerAxis];
  __shared__ int live_count;

  const int tid = threadIdx.x;
  const int task = blockIdx.z / p.k_splits, split = blockIdx.z % p.k_splits;
  if (tid == 0) t = p.tasks[task];
  __syncthreads();
  const int qhw = t.q_count_h * t.q_count_w;
  const long long M = static_cast<long long>(p.batch) * qhw;
  const long long m0 = static_cast<long long>(blockIdx.x) * BM;
  if (m0 >= M) return;  // a smaller phase than the largest: the whole block leaves
  const int n0 = blockIdx.y * BN;
  find_live_taps(p, t, m0, BM, live, &live_count);

  // The A rows (pixels) and B rows (input channels) this thread loads: pass v takes
  // A row a_row + v * (kThreads / KV) and B row b_k + v * (kThreads / NV). Everything
  // that does not change from slice to slice is computed here, so a fetch is a few
  // additions (the index arithmetic, not the multiplies, otherwise bounds these tiles).
  const int a_row = tid / KV, a_k = (tid % KV) * 4;
  bool a_valid[V];
  int a_h[V], a_w[V];
  const float* a_pixel[V];  // the pixel's first channel at tap offset (0, 0)
#pragma unroll
  for (int v = 0; v < V; ++v) {
    const long long am = m0 + a_row + v * (kThreads / KV);
    a_valid[v] = am < M;
    int n = 0;
    a_h[v] = a_w[v] = 0;
    if (a_valid[v]) {
      n = static_cast<int>(am / qhw);
      const int r = static_cast<int>(am % qhw);
      a_h[v] = (t.q_begin_h + r / t.q_count_w) * t.in_step_h;
      a_w[v] = (t.q_begin_w + r % t.q_count_w) * t.in_step_w;
    }
    a_pixel[v] = p.x + ((static_cast<long long>(n) * p.in_h + a_h[v]) * p.in_w + a_w[v]) * p.cin + a_k;
  }
  const int b_k = tid / NV, b_n = (tid % NV) * 4;
  const int b_col = n0 + b_n;
  // Column b_col's panel: its offset within a tap's matrix and its row length.
  const int b_p0 = b_col / p.panel * p.panel;
  const int b_width = min(p.panel, p.cout - b_p0);
  const long long b_col_offset = static_cast<long long>(b_p0) * p.cin + (b_col - b_p0);
  const bool vec_a = (p.cin & 3) == 0;
  const bool vec_b = sizeof(WT) == 4 && (p.cout & 3) == 0 && (p.panel & 3) == 0;
  const WT* weights = static_cast<const WT*>(p.weights);

  const int c_chunks = (p.cin + BK - 1) / BK;
  const int total = live_count * c_chunks;
  const int c_begin = static_cast<int>(static_cast<long long>(total) * split / p.k_splits);
  const int c_end = static_cast<int>(static_cast<long long>(total) * (split + 1) / p.k_splits);
  // The next slice to fetch: live tap `f_tap`, channels from f_c0.
  int f_tap = c_begin / c_chunks, f_c0 = (c_begin % c_chunks) * BK;

  float a_reg[V][4], b_reg[V][4];
  auto fetch = [&]() {
    const LiveTap tap = live[f_tap];
    const long long tap_offset = (static_cast<long long>(tap.dh) * p.in_w + tap.dw) * p.cin + f_c0;
    const int ci = f_c0 + a_k;
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const int ih = a_h[v] + tap.dh, iw = a_w[v] + tap.dw;
      const bool inside = a_valid[v] && ih >= 0 && ih < p.in_h && iw >= 0 && iw < p.in_w;
      const float* xp = a_pixel[v] + tap_offset;
      if (vec_a) {
        const float4 x4 = inside && ci < p.cin ? __ldg(reinterpret_cast<const float4*>(xp)) : make_float4(0.f, 0.f, 0.f, 0.f);
        a_reg[v][0] = x4.x, a_reg[v][1] = x4.y, a_reg[v][2] = x4.z, a_reg[v][3] = x4.w;
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) a_reg[v][j] = inside && ci + j < p.cin ? __ldg(xp + j) : 0.f;
      }
    }
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const int wrow = f_c0 + b_k + v * (kThreads / NV);
      const long long w = tap.weights + b_col_offset + static_cast<long long>(wrow) * b_width;
      if (vec_b) {
        float4 w4 = make_float4(0.f, 0.f, 0.f, 0.f);
        if (wrow < p.cin && b_col < p.cout) w4 = __ldg(reinterpret_cast<const float4*>(reinterpret_cast<const float*>(weights) + w));
        b_reg[v][0] = w4.x, b_reg[v][1] = w4.y, b_reg[v][2] = w4.z, b_reg[v][3] = w4.w;
      } else {
        // Columns past the panel's end continue in the next panel: the general index.
#pragma unroll
        for (int j = 0; j < 4; ++j)
          b_reg[v][j] = wrow < p.cin && b_col + j < p.cout ? weight_at(weights, tap.weights + panel_index(p, wrow, b_col + j)) : 0.f;
      }
    }
    f_c0 += BK;
    if (f_c0 >= p.cin) f_c0 = 0, ++f_tap;
  };
  // Tensor cores read TF32: rounded here, once per element.
  auto operand = [](float x) { return MATH == kTf32 ? __uint_as_float(to_tf32(x)) : x; };
  auto stash = [&](int s) {
#pragma unroll
    for (int v = 0; v < V; ++v) {
#pragma unroll
      for (int j = 0; j < 4; ++j) As[s][a_k + j][a_row + v * (kThreads / KV)] = operand(a_reg[v][j]);
      *reinterpret_cast<float4*>(&Bs[s][b_k + v * (kThreads / NV)][b_n]) =
          make_float4(operand(b_reg[v][0]), operand(b_reg[v][1]), operand(b_reg[v][2]), operand(b_reg[v][3]));
    }
  };

  // kFma: thread (ty, tx) owns rows and columns {(i / 4) * 64 + 4 * t + i % 4}: float4
  // reads of a 16-thread row of shared memory are then contiguous (no bank conflicts).
  const int ty = tid / 16, tx = tid % 16;
  // Tensor cores: warp (wm, wn) owns rows wm*64 + mi*16 + {g, g+8} and columns
  // wn*32 + ni*8 + 2*q + {0, 1} (g = lane / 4, q = lane % 4: the mma fragment layout).
  const int lane = tid % 32, warp = tid / 32, g = lane / 4, q = lane % 4;
  const int wm = warp / 4, wn = warp % 4;
  float acc[TM * TM];
#pragma unroll
  for (int i = 0; i < TM * TM; ++i) acc[i] = 0.f;

  if (c_begin < c_end) {
    fetch();
    stash(0);
    __syncthreads();
    for (int c = c_begin; c < c_end; ++c) {
      const int s = (c - c_begin) & 1;
      const bool more = c + 1 < c_end;
      if (more) fetch();
      if constexpr (MATH == kFma) {
#pragma unroll
        for (int k = 0; k < BK; ++k) {
          float a[TM], b[TM];
#pragma unroll
          for (int i = 0; i < TM; i += 4) {
            const float4 va = *reinterpret_cast<const float4*>(&As[s][k][(i / 4) * 64 + ty * 4]);
            const float4 vb = *reinterpret_cast<const float4*>(&Bs[s][k][(i / 4) * 64 + tx * 4]);
            a[i] = va.x, a[i + 1] = va.y, a[i + 2] = va.z, a[i + 3] = va.w;
            b[i] = vb.x, b[i + 1] = vb.y, b[i + 2] = vb.z, b[i + 3] = vb.w;
          }
#pragma unroll
          for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TM; ++j) acc[i * TM + j] = fmaf(a[i], b[j], acc[i * TM + j]);
        }
      } else {
#pragma unroll
        for (int kk = 0; kk < BK; kk += 8) {
          uint32_t a[4][4], b[4][2];
#pragma unroll
          for (int mi = 0; mi < 4; ++mi) {
            const int r = wm * 64 + mi * 16 + g;
            a[mi][0] = __float_as_uint(As[s][kk + q][r]), a[mi][1] = __float_as_uint(As[s][kk + q][r + 8]);
            a[mi][2] = __float_as_uint(As[s][kk + q + 4][r]), a[mi][3] = __float_as_uint(As[s][kk + q + 4][r + 8]);
          }
#pragma unroll
          for (int ni = 0; ni < 4; ++ni) {
            const int col = wn * 32 + ni * 8 + g;
            b[ni][0] = __float_as_uint(Bs[s][kk + q][col]), b[ni][1] = __float_as_uint(Bs[s][kk + q + 4][col]);
          }
#pragma unroll
          for (int mi = 0; mi < 4; ++mi)
#pragma unroll
            for (int ni = 0; ni < 4; ++ni) mma_tf32(*reinterpret_cast<float(*)[4]>(&acc[(mi * 4 + ni) * 4]), a[mi], b[ni]);
        }
      }
      if (more) stash(s ^ 1);
      __syncthreads();
    }
  }

  if constexpr (MATH == kFma) {
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const long long m = m0 + (i / 4) * 64 + ty * 4 + i % 4;
      if (m >= M) continue;
#pragma unroll
      for (int j = 0; j < TM; ++j) {
        const int col = n0 + (j / 4) * 64 + tx * 4 + j % 4;
        if (col < p.cout) store_output(p, t, task, split, m, col, acc[i * TM + j]);
      }
    }
  } else {
    store_mma_tiles(p, t, task, split, M, m0, n0, wm, wn, g, q, acc);
  }
}

// TF32 tensor cores fed by cp.async (sm_80 and later): a 128 x 128 output tile per
// block, K in 32-deep slices through a ring of kPipeStages shared-memory buffers, so
// the copies of slices c+1 and c+2 are in flight while slice c is multiplied, and no
// operand passes through registers on its way to shared memory. The copies move 16
// bytes (4 channels of a pixel, 4 columns of a weight row) and write zeros where a tap
// reads outside the input, so this kernel takes Cin, Cout and panel widths that are
// multiples of 4 with FP32 weights on 16-byte boundaries (pipelined_layout, and the
// pointer check in conv_gemm); other problems run conv_gemm_tiled's TF32 tiles. Warps
// and fragments as there (8 warps as 2 x 4, each a 64 x 32 block of m16n8k8 tiles).
// Operands are rounded to TF32 as fragments are read (rounding them once in shared
// memory, by the thread that copied them, measured 0-10% slower on an H100). A is
// stored [pixel][k] (row pitch 36 words: the fragment reads of a warp, rows g and
// columns q, fall in banks 4g + q), B [k][column] (pitch 136: banks 8q + g). 107.5 KB
// of dynamic shared memory: two blocks per Hopper multiprocessor, one on Orin.
constexpr int kPipeBM = 128, kPipeBN = 128, kPipeBK = 32, kPipeStages = 3;
constexpr int kPipeApitch = kPipeBK + 4, kPipeBpitch = kPipeBN + 8;
constexpr int kPipeStageFloats = kPipeBM * kPipeApitch + kPipeBK * kPipeBpitch;
constexpr int kPipeSharedBytes = kPipeStages * kPipeStageFloats * 4;
// The shallowest reduction (taps x Cin) the planner gives the pipelined kernel.
constexpr long long kPipelinedMinDepth = 256;

__device__ __forceinline__ void cp_async16(float* shared, const float* global, bool fill) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(global), "r"(fill ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

__global__ void __launch_bounds__(kThreads, 2) conv_gemm_tensor_pipelined(Params p) {
  extern __shared__ __align__(16) float ring[];  // kPipeStages x (A [BM][Apitch], B [BK][Bpitch])
  __shared__ ConvGemmTask t;
  __shared__ LiveTap live[kMaxTapsPerAxis * kMaxTapsPerAxis];
  __shared__ int live_count;
  constexpr int kLoads = kPipeBM * kPipeBK / (kThreads * 4);  // 16-byte copies per thread per slice, of A and of B
  static_assert(kLoads * kThreads * 4 == kPipeBK * kPipeBN, "A and B slices take the same number of copies");

  const int tid = threadIdx.x;
  const int task = blockIdx.z / p.k_splits, split = blockIdx.z % p.k_splits;
  if (tid == 0) t = p.tasks[task];
  __syncthreads();
  const int qhw = t.q_count_h * t.q_count_w;
  const long long M = static_cast<long long>(p.batch) * qhw;
  const long long m0 = static_cast<long long>(blockIdx.x) * kPipeBM;
  if (m0 >= M) return;
  const int n0 = blockIdx.y * kPipeBN;
  find_live_taps(p, t, m0, kPipeBM, live, &live_count);

  // Copy i of A: pixel row a_row + 32 i, channels a_k..a_k+3 of the slice; of B: weight
  // row b_k + 8 i, columns b_n..b_n+3 of the tile.
  // Rows past M get a row far outside the input, so every tap reads zeros for them.
  // Offsets are 32-bit (conv_gemm_supports refuses tensors of 2^31 elements): the
  // 128-register budget of two blocks per multiprocessor leaves no room for pointers.
  const int a_row = tid / 8, a_k = (tid % 8) * 4;
  int a_h[kLoads], a_w[kLoads], a_offset[kLoads];
#pragma unroll
  for (int i = 0; i < kLoads; ++i) {
    const long long am = m0 + a_row + i * 32;
    int n = 0;
    a_h[i] = -(1 << 29), a_w[i] = 0;
    if (am < M) {
      n = static_cast<int>(am / qhw);
      const int r = static_cast<int>(am % qhw);
      a_h[i] = (t.q_begin_h + r / t.q_count_w) * t.in_step_h;
      a_w[i] = (t.q_begin_w + r % t.q_count_w) * t.in_step_w;
    }
    a_offset[i] = am < M ? ((n * p.in_h + a_h[i]) * p.in_w + a_w[i]) * p.cin + a_k : 0;
  }
  const int b_k = tid / 32, b_n = (tid % 32) * 4;
  const int b_col = n0 + b_n;
  const int b_p0 = b_col / p.panel * p.panel;
  const int b_width = min(p.panel, p.cout - b_p0);
  const long long b_col_offset = static_cast<long long>(b_p0) * p.cin + (b_col - b_p0);
  const float* weights = static_cast<const float*>(p.weights);

  const int c_chunks = (p.cin + kPipeBK - 1) / kPipeBK;
  const int total = live_count * c_chunks;
  const int c_begin = static_cast<int>(static_cast<long long>(total) * split / p.k_splits);
  const int c_end = static_cast<int>(static_cast<long long>(total) * (split + 1) / p.k_splits);
  int f_tap = c_begin / c_chunks, f_c0 = (c_begin % c_chunks) * kPipeBK;

  // Starts the copies of the next slice into ring stage s.
  auto fetch = [&](int s) {
    float* As = ring + s * kPipeStageFloats;
    float* Bs = As + kPipeBM * kPipeApitch;
    const LiveTap tap = live[f_tap];
    const int tap_offset = (tap.dh * p.in_w + tap.dw) * p.cin + f_c0;
    const bool channels_in = f_c0 + a_k < p.cin;
#pragma unroll
    for (int i = 0; i < kLoads; ++i) {
      const int ih = a_h[i] + tap.dh, iw = a_w[i] + tap.dw;
      const bool inside = channels_in && ih >= 0 && ih < p.in_h && iw >= 0 && iw < p.in_w;
      cp_async16(As + (a_row + i * 32) * kPipeApitch + a_k, p.x + (inside ? a_offset[i] + tap_offset : 0), inside);
    }
#pragma unroll
    for (int i = 0; i < kLoads; ++i) {
      const int wrow = f_c0 + b_k + i * 8;
      const bool inside = wrow < p.cin && b_col < p.cout;
      const float* w = weights + tap.weights + b_col_offset + static_cast<long long>(wrow) * b_width;
      cp_async16(Bs + (b_k + i * 8) * kPipeBpitch + b_n, inside ? w : weights, inside);
    }
    f_c0 += kPipeBK;
    if (f_c0 >= p.cin) f_c0 = 0, ++f_tap;
  };

  const int lane = tid % 32, warp = tid / 32, g = lane / 4, q = lane % 4;
  const int wm = warp / 4, wn = warp % 4;
  float acc[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = 0.f;

  const int slices = c_end - c_begin;
#pragma unroll
  for (int s = 0; s < kPipeStages - 1; ++s) {
    if (s < slices) fetch(s);
    cp_async_commit();  // an empty group where there is no slice: the wait counts stay uniform
  }
  for (int c = 0; c < slices; ++c) {
    cp_async_wait<kPipeStages - 2>();  // slice c has landed (for this thread's copies)
    __syncthreads();                   // ... and for every thread's; stage (c - 1) % S is free
    if (c + kPipeStages - 1 < slices) fetch((c + kPipeStages - 1) % kPipeStages);
    cp_async_commit();
    const float* As = ring + (c % kPipeStages) * kPipeStageFloats;
    const float* Bs = As + kPipeBM * kPipeApitch;
#pragma unroll
    for (int kk = 0; kk < kPipeBK; kk += 8) {
      uint32_t a[4][4], b[4][2];
#pragma unroll
      for (int mi = 0; mi < 4; ++mi) {
        const float* r = As + (wm * 64 + mi * 16 + g) * kPipeApitch + kk + q;
        a[mi][0] = to_tf32(r[0]), a[mi][1] = to_tf32(r[8 * kPipeApitch]);
        a[mi][2] = to_tf32(r[4]), a[mi][3] = to_tf32(r[8 * kPipeApitch + 4]);
      }
#pragma unroll
      for (int ni = 0; ni < 4; ++ni) {
        const float* col = Bs + (kk + q) * kPipeBpitch + wn * 32 + ni * 8 + g;
        b[ni][0] = to_tf32(col[0]), b[ni][1] = to_tf32(col[4 * kPipeBpitch]);
      }
#pragma unroll
      for (int mi = 0; mi < 4; ++mi)
#pragma unroll
        for (int ni = 0; ni < 4; ++ni) mma_tf32(*reinterpret_cast<float(*)[4]>(&acc[(mi * 4 + ni) * 4]), a[mi], b[ni]);
    }
  }
  cp_async_wait<0>();
  store_mma_tiles(p, t, task, split, M, m0, n0, wm, wn, g, q, acc);
}

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
constexpr int kNarrowStagedBytesMax = 96 * 1024;

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
// One thread (or lane group) per item, no stride loop: every item needs its block.
unsigned blocks_covering(long long n, int threads) { return static_cast<unsigned>((n + threads - 1) / threads); }

template <typename WT>
void launch(const Params& p, const ConvGemmLaunch& l, cudaStream_t stream) {
  const unsigned tasks = static_cast<unsigned>(p.task_count);
  ConvGemmLaunch::Kind kind = l.kind;
  if (kind == ConvGemmLaunch::Kind::kTensor128Tf32Pipelined && !std::is_same_v<WT, float>) kind = ConvGemmLaunch::Kind::kTensor128Tf32;
  switch (kind) {
    case ConvGemmLaunch::Kind::kTiled64: {
      const dim3 grid(static_cast<unsigned>((p.max_pixels + 63) / 64), static_cast<unsigned>((p.cout + 63) / 64), tasks * l.k_splits);
      conv_gemm_tiled<64, 16, 4, kFma, WT><<<grid, kThreads, 0, stream>>>(p);
      break;
    }
    case ConvGemmLaunch::Kind::kTiled128: {
      const dim3 grid(static_cast<unsigned>((p.max_pixels + 127) / 128), static_cast<unsigned>((p.cout + 127) / 128), tasks * l.k_splits);
      conv_gemm_tiled<128, 8, 8, kFma, WT><<<grid, kThreads, 0, stream>>>(p);
      break;
    }
    case ConvGemmLaunch::Kind::kTensor128Tf32: {
      const dim3 grid(static_cast<unsigned>((p.max_pixels + 127) / 128), static_cast<unsigned>((p.cout + 127) / 128), tasks * l.k_splits);
      conv_gemm_tiled<128, 16, 8, kTf32, WT><<<grid, kThreads, 0, stream>>>(p);
      break;
    }
    case ConvGemmLaunch::Kind::kTensor128Tf32Pipelined: {
      const dim3 grid(static_cast<unsigned>((p.max_pixels + 127) / 128), static_cast<unsigned>((p.cout + 127) / 128), tasks * l.k_splits);
      conv_gemm_tensor_pipelined<<<grid, kThreads, kPipeSharedBytes, stream>>>(p);
      break;
    }
    case ConvGemmLaunch::Kind::kNarrow:
      conv_gemm_narrow<1, WT><<<dim3(blocks_covering(p.max_pixels, kThreads), tasks), kThreads, p.staged_floats * 4, stream>>>(p);
      break;
    case ConvGemmLaunch::Kind::kNarrowGroup8:
      conv_gemm_narrow<8, WT><<<dim3(blocks_covering(p.max_pixels * 8, kThreads), tasks), kThreads, p.staged_floats * 4, stream>>>(p);
      break;
    case ConvGemmLaunch::Kind::kNarrowWarp:
      conv_gemm_narrow<32, WT><<<dim3(blocks_covering(p.max_pixels * 32, kThreads), tasks), kThreads, p.staged_floats * 4, stream>>>(p);
      break;
  }
  check_cuda(cudaGetLastError(), "conv_gemm launch");
  if (l.k_splits > 1) {
    conv_gemm_reduce<<<blocks_for(p.max_pixels * p.cout * p.task_count, kThreads), kThreads, 0, stream>>>(p);
    check_cuda(cudaGetLastError(), "conv_gemm reduce launch");
  }
}

}  // namespace

long long ConvGemmShape::max_task_pixels() const {
  long long m = 0;
  for (const ConvGemmTask& t : tasks) m = std::max(m, static_cast<long long>(batch) * t.q_count_h * t.q_count_w);
  return m;
}

long long ConvGemmShape::macs() const {
  long long total = 0;
  for (const ConvGemmTask& t : tasks)
    total += static_cast<long long>(batch) * t.q_count_h * t.q_count_w * t.taps_h * t.taps_w * cin * static_cast<long long>(cout);
  return total;
}

const char* ConvGemmLaunch::name() const {
  switch (kind) {
    case Kind::kTiled64: return k_splits > 1 ? "gemm_tiled64_splitk" : "gemm_tiled64";
    case Kind::kTiled128: return k_splits > 1 ? "gemm_tiled128_splitk" : "gemm_tiled128";
    case Kind::kTensor128Tf32: return k_splits > 1 ? "gemm_tensor128_tf32_splitk" : "gemm_tensor128_tf32";
    case Kind::kTensor128Tf32Pipelined: return k_splits > 1 ? "gemm_tensor128_tf32_cpasync_splitk" : "gemm_tensor128_tf32_cpasync";
    case Kind::kNarrow: return "gemm_narrow";
    case Kind::kNarrowGroup8: return "gemm_narrow_group8";
    case Kind::kNarrowWarp: return "gemm_narrow_warp";
  }
  return "gemm";
}

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

// Lets the pipelined tensor-core kernel take its ring (past the default 48 KB); once per
// process, when first planned, and only where the device offers that much per block.
bool allow_pipelined_ring() {
  static const bool allowed = [] {
    int device = 0, optin = 0;
    check_cuda(cudaGetDevice(&device), "get device");
    check_cuda(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), "shared memory per block");
    cudaFuncAttributes attributes{};
    check_cuda(cudaFuncGetAttributes(&attributes, reinterpret_cast<const void*>(&conv_gemm_tensor_pipelined)), "pipelined kernel attributes");
    if (static_cast<size_t>(optin) < attributes.sharedSizeBytes + kPipeSharedBytes) return false;
    check_cuda(cudaFuncSetAttribute(reinterpret_cast<const void*>(&conv_gemm_tensor_pipelined), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    kPipeSharedBytes),
               "pipelined ring shared memory");
    return true;
  }();
  return allowed;
}

// Whether a problem's layout lets the pipelined kernel copy 16 bytes at a time: 4-wide
// channel groups and panels, every task's weights starting on a 4-float boundary.
bool pipelined_layout(const ConvGemmShape& s) {
  const int panel = s.panel <= 0 || s.panel > s.cout ? s.cout : s.panel;
  if (s.cin % 4 || s.cout % 4 || panel % 4) return false;
  for (const ConvGemmTask& t : s.tasks)
    if (t.weights % 4) return false;
  return true;
}

ConvGemmLaunch plan_conv_gemm(const ConvGemmShape& s, int sms, GemmMath math) {
  ConvGemmLaunch l;
  const long long M = s.max_task_pixels();
  const long long tasks = static_cast<long long>(s.tasks.size());
  int max_taps = 0;
  for (const ConvGemmTask& t : s.tasks) max_taps = std::max(max_taps, t.taps_h * t.taps_w);
  const long long K = static_cast<long long>(max_taps) * s.cin;
  if (s.cout <= 4) {
    allow_narrow_staging();
    // One lane per pixel fills the GPU when there are pixels enough; otherwise a group
    // or a warp per pixel splits the (deep) reduction.
    if (M * tasks >= static_cast<long long>(sms) * 512) l.kind = ConvGemmLaunch::Kind::kNarrow;
    else if (M * tasks >= static_cast<long long>(sms) * 64) l.kind = K >= 128 ? ConvGemmLaunch::Kind::kNarrowGroup8 : ConvGemmLaunch::Kind::kNarrow;
    else l.kind = K >= 128 ? ConvGemmLaunch::Kind::kNarrowWarp : ConvGemmLaunch::Kind::kNarrow;
    return l;
  }
  auto tiles = [&](long long bm) { return (M + bm - 1) / bm * ((s.cout + bm - 1) / bm) * tasks; };
  auto split_k = [&](long long blocks, long long slices, long long min_slices) {
    if (blocks >= sms) return;
    const long long splits = std::min({(2LL * sms + blocks - 1) / blocks, slices / min_slices, 32LL});
    if (splits >= 2) {
      l.k_splits = static_cast<int>(splits);
      l.workspace_bytes = static_cast<uint64_t>(splits * tasks * M * s.cout) * 4;
    }
  };
  // TF32 tensor cores where they measured faster than the FMA tiles on an H100
  // (bench/cuda_layers_bench --kinds): the pipelined kernel for Cout >= 128 from K >=
  // kPipelinedMinDepth; narrower outputs waste part of its 128-wide tiles, and it won
  // there only with K >= 512 and at least four waves of tiles. The register-staged
  // kernel (layouts the pipelined one cannot copy) from K >= 1024. Split K makes up
  // for few tiles.
  const bool pipelined_pays = s.cout >= 128 ? K >= kPipelinedMinDepth : s.cout >= 32 && K >= 512 && tiles(128) >= 4LL * sms;
  if (math == GemmMath::kTf32 && M >= 128 && pipelined_pays && pipelined_layout(s) && allow_pipelined_ring()) {
    l.kind = ConvGemmLaunch::Kind::kTensor128Tf32Pipelined;
    split_k(tiles(128), static_cast<long long>(max_taps) * ((s.cin + kPipeBK - 1) / kPipeBK), 4);
    return l;
  }
  if (math == GemmMath::kTf32 && M >= 128 && s.cout >= 64 && K >= 1024) {
    l.kind = ConvGemmLaunch::Kind::kTensor128Tf32;
    split_k(tiles(128), static_cast<long long>(max_taps) * ((s.cin + 15) / 16), 4);
    return l;
  }
  if (M >= 128 && s.cout >= 96 && tiles(128) >= 2LL * sms) {
    l.kind = ConvGemmLaunch::Kind::kTiled128;
    return l;
  }
  // Too few tiles to fill the GPU: split K so that each block still gets >= 4 slices.
  l.kind = ConvGemmLaunch::Kind::kTiled64;
  split_k(tiles(64), static_cast<long long>(max_taps) * ((s.cin + 15) / 16), 4);
  return l;
}

bool conv_gemm_supports(const ConvGemmShape& s, std::string* why) {
  auto fail = [&](const std::string& w) {
    if (why) *why = w;
    return false;
  };
  for (const ConvGemmTask& t : s.tasks)
    if (t.taps_h > kMaxTapsPerAxis || t.taps_w > kMaxTapsPerAxis)
      return fail("more than " + std::to_string(kMaxTapsPerAxis) + " taps per axis in one phase");
  const long long limit = (1LL << 31) - 1;
  if (static_cast<long long>(s.batch) * s.in_h * s.in_w * s.cin > limit || static_cast<long long>(s.batch) * s.out_h * s.out_w * s.cout > limit)
    return fail("a tensor of more than 2^31 elements");
  if (s.tasks.empty() || s.cin < 1 || s.cout < 1) return fail("an empty problem");
  return true;
}

void conv_gemm(const ConvGemmShape& s, const ConvGemmLaunch& l, const ConvGemmArgs& a, cudaStream_t stream) {
  Params p{};
  p.batch = s.batch, p.in_h = s.in_h, p.in_w = s.in_w, p.cin = s.cin, p.out_h = s.out_h, p.out_w = s.out_w, p.cout = s.cout;
  p.panel = s.panel <= 0 || s.panel > s.cout ? s.cout : s.panel;
  p.max_pixels = s.max_task_pixels();
  p.task_count = static_cast<int>(s.tasks.size());
  p.k_splits = l.k_splits;
  p.x = a.x, p.y = a.y, p.weights = a.weights, p.bias = a.bias, p.activation = a.activation, p.residual = a.residual, p.tasks = a.tasks;
  p.partials = static_cast<float*>(a.workspace);
  if (l.kind == ConvGemmLaunch::Kind::kNarrow || l.kind == ConvGemmLaunch::Kind::kNarrowGroup8 || l.kind == ConvGemmLaunch::Kind::kNarrowWarp) {
    int max_taps = 0;
    for (const ConvGemmTask& t : s.tasks) max_taps = std::max(max_taps, t.taps_h * t.taps_w);
    const long long floats = 4LL * max_taps * s.cin;  // padded to 4 output columns
    p.staged_floats = floats * 4 <= kNarrowStagedBytesMax ? static_cast<int>(floats) : 0;
    allow_narrow_staging();  // done when planned; a launch made by hand (the tests) needs it too
  }
  if (p.max_pixels == 0) return;
  if (l.kind == ConvGemmLaunch::Kind::kTensor128Tf32Pipelined) {
    // A launch made by hand (the tests) may name it for a problem it cannot copy.
    const bool aligned = reinterpret_cast<uintptr_t>(a.x) % 16 == 0 && reinterpret_cast<uintptr_t>(a.weights) % 16 == 0;
    if (a.weights_f16 || !aligned || !pipelined_layout(s) || !allow_pipelined_ring()) {
      ConvGemmLaunch fallback = l;
      fallback.kind = ConvGemmLaunch::Kind::kTensor128Tf32;
      if (a.weights_f16) launch<__half>(p, fallback, stream);
      else launch<float>(p, fallback, stream);
      return;
    }
  }
  if (a.weights_f16) launch<__half>(p, l, stream);
  else launch<float>(p, l, stream);
}

ConvGemmShape conv2d_gemm_shape(int batch, int in_h, int in_w, int cin, int out_h, int out_w, int cout, int kernel_h, int kernel_w,
                                int stride_h, int stride_w, int dilation_h, int dilation_w, int pad_top, int pad_left) {
  ConvGemmShape s;
  s.batch = batch, s.in_h = in_h, s.in_w = in_w, s.cin = cin, s.out_h = out_h, s.out_w = out_w, s.cout = cout;
  ConvGemmTask t;
  t.q_count_h = out_h, t.q_count_w = out_w;
  t.in_step_h = stride_h, t.in_step_w = stride_w;
  t.taps_h = kernel_h, t.taps_w = kernel_w;
  for (int k = 0; k < std::min(kernel_h, kMaxTapsPerAxis); ++k) t.tap_offset_h[k] = k * dilation_h - pad_top;
  for (int k = 0; k < std::min(kernel_w, kMaxTapsPerAxis); ++k) t.tap_offset_w[k] = k * dilation_w - pad_left;
  s.tasks.push_back(t);
  return s;
}

ConvGemmShape dense_gemm_shape(int batch, int in_features, int out_features) {
  return conv2d_gemm_shape(batch, 1, 1, in_features, 1, 1, out_features, 1, 1, 1, 1, 1, 1, 0, 0);
}

int multiprocessor_count() {
  static const int count = [] {
    int device = 0, sms = 0;
    check_cuda(cudaGetDevice(&device), "get device");
    check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "multiprocessor count");
    return sms;
  }();
  return count;
}

}  // namespace edgegan::cuda
