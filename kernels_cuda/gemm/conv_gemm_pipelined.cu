// The pipelined TF32 implicit GEMM (kTensor128Tf32Pipelined): operands copied by
// cp.async into a three-stage shared-memory ring.
#include "kernels_cuda/common/cuda_check.h"
#include "kernels_cuda/gemm/conv_gemm_device.cuh"

namespace edgegan::cuda::conv_gemm_detail {
namespace {

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
constexpr int kPipeBM = 128, kPipeBN = 128, kPipeStages = 3;
constexpr int kPipeApitch = kPipeBK + 4, kPipeBpitch = kPipeBN + 8;
constexpr int kPipeStageFloats = kPipeBM * kPipeApitch + kPipeBK * kPipeBpitch;
constexpr int kPipeSharedBytes = kPipeStages * kPipeStageFloats * 4;

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

}  // namespace

void launch_pipelined(const Params& p, unsigned tasks, int k_splits, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((p.max_pixels + 127) / 128), static_cast<unsigned>((p.cout + 127) / 128), tasks * k_splits);
  conv_gemm_tensor_pipelined<<<grid, kThreads, kPipeSharedBytes, stream>>>(p);
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

}  // namespace edgegan::cuda::conv_gemm_detail
