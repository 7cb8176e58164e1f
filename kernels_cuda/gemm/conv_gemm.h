// The CUDA backend's one GEMM engine: an implicit GEMM over NHWC activations that
// every weighted op runs on. A problem is a set of tasks; a task is a dense stride-1
// correlation whose output pixels (q_h, q_w) land at y[q*out_step + out_base] and
// whose taps read x[q*in_step + tap_offset]:
//   - a convolution is one task (out_step 1, in_step = stride, offsets t*dilation - pad);
//   - a split transposed convolution is one task per phase (out_step = stride,
//     in_step 1, offsets -offset[t]), so each phase writes straight into its strided
//     outputs: no zero is inserted, no col2im buffer, no scatter pass;
//   - a dense layer is one 1x1 task over 1x1 maps.
// Per task:  M = batch * q_count_h * q_count_w pixels, N = Cout, K = taps * Cin.
// Weights are read as the model file stores them: per tap a Cin x Cout matrix in
// column panels of `panel` columns (kernels::PanelLayout; panel = Cout is plain
// row-major), float32 or float16; so they can be mapped rather than copied.
//
// Blocks skip the taps that no pixel of their tile reads inside the input (trimming
// at tile granularity; per element the bounds are still checked). Bias and
// activation run in the epilogue. Sums are in a fixed order: results are identical
// run to run. Tiny maps with deep channels split K over blocks into a planned
// workspace, reduced in a fixed order by a second kernel (no atomics).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels_cuda/common/activation.h"

namespace edgegan::cuda {

constexpr int kMaxTapsPerAxis = 16;

struct ConvGemmTask {
  int q_begin_h = 0, q_count_h = 0, q_begin_w = 0, q_count_w = 0;
  int out_step_h = 1, out_base_h = 0, out_step_w = 1, out_base_w = 0;
  int in_step_h = 1, in_step_w = 1;
  int taps_h = 0, taps_w = 0;  // <= kMaxTapsPerAxis
  int tap_offset_h[kMaxTapsPerAxis] = {}, tap_offset_w[kMaxTapsPerAxis] = {};
  long long weights = 0;  // element offset of the task's taps_h*taps_w matrices
};

// Geometry and tasks of one problem, fixed when a kernel is built (the tasks live in
// device memory, uploaded once).
struct ConvGemmShape {
  int batch = 1, in_h = 1, in_w = 1, cin = 0, out_h = 1, out_w = 1, cout = 0;
  int panel = 0;  // weight panel width; 0 or >= cout: plain [Cin][Cout] per tap
  std::vector<ConvGemmTask> tasks;
  long long max_task_pixels() const;  // the largest M
  long long macs() const;             // every (pixel, tap, ci, co) the tasks touch, bounds included
};

// How a problem is cut into blocks on a device: chosen once, when the kernel is built.
struct ConvGemmLaunch {
  // kTiled*: FP32 FMA units. kTensor128Tf32: tensor cores on TF32 operands (GemmMath::kTf32
  // only); kTensor128Tf32Pipelined: the same arithmetic with its operands copied into a
  // three-stage shared-memory ring by cp.async (problems whose channel counts and panels
  // are multiples of 4, FP32 weights; others run kTensor128Tf32). kNarrow*: heads with
  // 1-4 output channels.
  enum class Kind { kTiled64, kTiled128, kTensor128Tf32, kTensor128Tf32Pipelined, kNarrow, kNarrowGroup8, kNarrowWarp } kind = Kind::kTiled64;
  int k_splits = 1;                   // > 1: partial sums in the workspace, then a reduce
  uint64_t workspace_bytes = 0;
  const char* name() const;           // "gemm_tiled128", "gemm_narrow_warp", ... (+ "_splitk")
};
// The arithmetic a problem may use: kFp32 (FMA units, FP32 accuracy), or kTf32: the
// tensor cores on operands rounded to TF32 where that is faster (PyTorch's default for
// cuDNN convolutions; about 1e-3 relative error).
enum class GemmMath { kFp32, kTf32 };
ConvGemmLaunch plan_conv_gemm(const ConvGemmShape& shape, int multiprocessors, GemmMath math = GemmMath::kFp32);

// One run. `tasks` is the shape's task table in device memory; weights are float or
// (weights_f16) IEEE halves; bias may be null; the activation applies to the sum plus
// bias, and a residual (a tensor of y's shape, may be null) is added after it.
struct ConvGemmArgs {
  const float* x = nullptr;
  float* y = nullptr;
  const void* weights = nullptr;
  bool weights_f16 = false;
  const float* bias = nullptr;
  ActivationParams activation;
  const float* residual = nullptr;
  const ConvGemmTask* tasks = nullptr;
  void* workspace = nullptr;  // launch.workspace_bytes
};
void conv_gemm(const ConvGemmShape& shape, const ConvGemmLaunch& launch, const ConvGemmArgs& args, cudaStream_t stream);

// The problems the engine's ops pose (host-side tables; kernels_common/ geometry).
// A convolution: weights [kh][kw][Cin][Cout].
ConvGemmShape conv2d_gemm_shape(int batch, int in_h, int in_w, int cin, int out_h, int out_w, int cout, int kernel_h, int kernel_w,
                                int stride_h, int stride_w, int dilation_h, int dilation_w, int pad_top, int pad_left);
// A dense layer y[N][out] = x[N][in] W[in][out].
ConvGemmShape dense_gemm_shape(int batch, int in_features, int out_features);

// Whether the GEMM can run a problem; otherwise `why` says what is over its limits.
bool conv_gemm_supports(const ConvGemmShape& shape, std::string* why);

// Number of multiprocessors of the current device (cached).
int multiprocessor_count();

}  // namespace edgegan::cuda
