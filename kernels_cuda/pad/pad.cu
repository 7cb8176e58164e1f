#include "kernels_cuda/pad/pad.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "kernels_cuda/common/cuda_check.h"

namespace edgegan::cuda {
namespace {

constexpr int kThreads = 256;
int blocks_for(long long n) { return static_cast<int>(std::max<long long>(1, std::min<long long>((n + kThreads - 1) / kThreads, 1 << 20))); }

// One thread per output float, channels innermost: reads and writes of a pixel coalesce.
__global__ void pad_kernel(long long count, long long channels, long long out_h, long long out_w, long long in_h, long long in_w,
                           const int32_t* __restrict__ h_source, const int32_t* __restrict__ w_source, float value, const float* __restrict__ x,
                           float* __restrict__ y) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long c = i % channels, pixel = i / channels;
    const long long ow = pixel % out_w, row = pixel / out_w;
    const long long oh = row % out_h, n = row / out_h;
    const int hs = __ldg(h_source + oh), ws = __ldg(w_source + ow);
    y[i] = hs < 0 || ws < 0 ? value : x[((n * in_h + hs) * in_w + ws) * channels + c];
  }
}

}  // namespace

void pad(const kernels::PadShape& s, const int32_t* h_source, const int32_t* w_source, const float* x, float* y, cudaStream_t stream) {
  const long long count = s.batch * s.h.out() * s.w.out() * s.channels;
  if (count <= 0) return;
  pad_kernel<<<blocks_for(count), kThreads, 0, stream>>>(count, s.channels, s.h.out(), s.w.out(), s.h.in, s.w.in, h_source, w_source, s.value, x, y);
  check_cuda(cudaGetLastError(), "pad launch");
}

}  // namespace edgegan::cuda
