// The tiled implicit GEMM: FP32 FMA tiles (kTiled64, kTiled128) and register-staged
// TF32 tensor-core tiles (kTensor128Tf32), one template.
#include "kernels_cuda/common/cuda_check.h"
#include "kernels_cuda/gemm/conv_gemm_device.cuh"

namespace edgegan::cuda::conv_gemm_detail {
namespace {

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

}  // namespace

template <typename WT>
void launch_tiled(const Params& p, ConvGemmLaunch::Kind kind, unsigned tasks, int k_splits, cudaStream_t stream) {
  switch (kind) {
    case ConvGemmLaunch::Kind::kTiled64: {
      const dim3 grid(static_cast<unsigned>((p.max_pixels + 63) / 64), static_cast<unsigned>((p.cout + 63) / 64), tasks * k_splits);
      conv_gemm_tiled<64, 16, 4, kFma, WT><<<grid, kThreads, 0, stream>>>(p);
      break;
    }
    case ConvGemmLaunch::Kind::kTiled128: {
      const dim3 grid(static_cast<unsigned>((p.max_pixels + 127) / 128), static_cast<unsigned>((p.cout + 127) / 128), tasks * k_splits);
      conv_gemm_tiled<128, 8, 8, kFma, WT><<<grid, kThreads, 0, stream>>>(p);
      break;
    }
    case ConvGemmLaunch::Kind::kTensor128Tf32: {
      const dim3 grid(static_cast<unsigned>((p.max_pixels + 127) / 128), static_cast<unsigned>((p.cout + 127) / 128), tasks * k_splits);
      conv_gemm_tiled<128, 16, 8, kTf32, WT><<<grid, kThreads, 0, stream>>>(p);
      break;
    }
    default: throw CudaError("conv_gemm: launch_tiled given a kind of another family");
  }
}

template void launch_tiled<float>(const Params&, ConvGemmLaunch::Kind, unsigned, int, cudaStream_t);
template void launch_tiled<__half>(const Params&, ConvGemmLaunch::Kind, unsigned, int, cudaStream_t);

}  // namespace edgegan::cuda::conv_gemm_detail
