// The implicit GEMM's host side: the planner (which kernel family and split for a
// problem on a device), its limits, and the dispatch of a run to the family's launcher.
// The kernels are one family per file (conv_gemm_internal.h lists them).
#include "kernels_cuda/gemm/conv_gemm.h"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>

#include "kernels_cuda/common/cuda_check.h"
#include "kernels_cuda/gemm/conv_gemm_internal.h"

namespace edgegan::cuda {

using namespace conv_gemm_detail;

namespace {

template <typename WT>
void launch(const Params& p, const ConvGemmLaunch& l, cudaStream_t stream) {
  const unsigned tasks = static_cast<unsigned>(p.task_count);
  ConvGemmLaunch::Kind kind = l.kind;
  if (kind == ConvGemmLaunch::Kind::kTensor128Tf32Pipelined && !std::is_same_v<WT, float>) kind = ConvGemmLaunch::Kind::kTensor128Tf32;
  switch (kind) {
    case ConvGemmLaunch::Kind::kTiled64:
    case ConvGemmLaunch::Kind::kTiled128:
    case ConvGemmLaunch::Kind::kTensor128Tf32: launch_tiled<WT>(p, kind, tasks, l.k_splits, stream); break;
    case ConvGemmLaunch::Kind::kTensor128Tf32Pipelined: launch_pipelined(p, tasks, l.k_splits, stream); break;
    case ConvGemmLaunch::Kind::kNarrow:
    case ConvGemmLaunch::Kind::kNarrowGroup8:
    case ConvGemmLaunch::Kind::kNarrowWarp: launch_narrow<WT>(p, kind, tasks, stream); break;
  }
  check_cuda(cudaGetLastError(), "conv_gemm launch");
  if (l.k_splits > 1) {
    launch_reduce(p, stream);
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
