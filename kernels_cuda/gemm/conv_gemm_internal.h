// What the files of the implicit GEMM share (conv_gemm.h is its interface): the
// parameters every kernel takes, the constants the planner reads, and one launcher per
// kernel family, each family in a file of its own:
//   conv_gemm_tiled.cu      FP32 FMA tiles (64 and 128 wide) and register-staged TF32 tiles
//   conv_gemm_pipelined.cu  TF32 tiles fed by a cp.async ring
//   conv_gemm_narrow.cu     heads with 1-4 output channels
//   conv_gemm_reduce.cu     the split-K reduction
//   conv_gemm.cu            the planner, the limits, and the dispatch to the families
// Included only by those files.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels_cuda/gemm/conv_gemm.h"

namespace edgegan::cuda::conv_gemm_detail {

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

// The pipelined kernel's K slice, and the shallowest reduction (taps x Cin) the planner gives it.
constexpr int kPipeBK = 32;
constexpr long long kPipelinedMinDepth = 256;

// The narrow heads' dynamic shared memory for staged weights (conv_gemm_narrow.cu says why 96 KB).
constexpr int kNarrowStagedBytesMax = 96 * 1024;

// kTiled64, kTiled128 and kTensor128Tf32 over `tasks` tasks, each split `k_splits` ways.
template <typename WT>
void launch_tiled(const Params& p, ConvGemmLaunch::Kind kind, unsigned tasks, int k_splits, cudaStream_t stream);
// kTensor128Tf32Pipelined (FP32 weights only).
void launch_pipelined(const Params& p, unsigned tasks, int k_splits, cudaStream_t stream);
// kNarrow, kNarrowGroup8 and kNarrowWarp (never split).
template <typename WT>
void launch_narrow(const Params& p, ConvGemmLaunch::Kind kind, unsigned tasks, cudaStream_t stream);
// Sums the k_splits partial products, then bias, activation and residual.
void launch_reduce(const Params& p, cudaStream_t stream);

// Raise the kernels' dynamic shared memory limits; once per process (see their files).
void allow_narrow_staging();
bool allow_pipelined_ring();

}  // namespace edgegan::cuda::conv_gemm_detail
