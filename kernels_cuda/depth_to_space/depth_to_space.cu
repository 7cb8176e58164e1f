#include "kernels_cuda/depth_to_space/depth_to_space.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "kernels_cuda/common/cuda_check.h"

namespace edgegan::cuda {
namespace {

constexpr int kThreads = 256;
int blocks_for(long long n) { return static_cast<int>(std::max<long long>(1, std::min<long long>((n + kThreads - 1) / kThreads, 1 << 20))); }

// Space map [N][H*b][W*b][C] from the depth map [N][H][W][C*b*b] (H, W: the depth map's).
template <bool Crd>
__global__ void to_space_kernel(long long count, long long height, long long width, long long channels, long long block,
                                const float* __restrict__ x, float* __restrict__ y) {
  const long long space_w = width * block, space_h = height * block, depth_c = channels * block * block;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long c = i % channels, pixel = i / channels;
    const long long ws = pixel % space_w, row = pixel / space_w;
    const long long hs = row % space_h, n = row / space_h;
    const long long bh = hs % block, bw = ws % block;
    const long long dc = Crd ? (c * block + bh) * block + bw : (bh * block + bw) * channels + c;
    y[i] = x[((n * height + hs / block) * width + ws / block) * depth_c + dc];
  }
}

// The depth map from the space map: depth channel dc splits into (bh, bw, c) by the mode.
template <bool Crd>
__global__ void to_depth_kernel(long long count, long long height, long long width, long long channels, long long block,
                                const float* __restrict__ x, float* __restrict__ y) {
  const long long space_w = width * block, depth_c = channels * block * block;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long dc = i % depth_c, pixel = i / depth_c;
    const long long wd = pixel % width, row = pixel / width;
    const long long hd = row % height, n = row / height;
    long long c, bh, bw;
    if (Crd) {
      bw = dc % block;
      bh = dc / block % block;
      c = dc / (block * block);
    } else {
      c = dc % channels;
      bw = dc / channels % block;
      bh = dc / (channels * block);
    }
    y[i] = x[(((n * height + hd) * block + bh) * space_w + wd * block + bw) * channels + c];
  }
}

}  // namespace

void depth_to_space(const kernels::DepthToSpaceShape& s, bool to_space, const float* x, float* y, cudaStream_t stream) {
  const long long count = s.batch * s.height * s.width * s.channels * s.block * s.block;
  if (count <= 0) return;
  const bool crd = s.mode == kernels::DepthToSpaceMode::kCRD;
  const int blocks = blocks_for(count);
  if (to_space) {
    if (crd) to_space_kernel<true><<<blocks, kThreads, 0, stream>>>(count, s.height, s.width, s.channels, s.block, x, y);
    else to_space_kernel<false><<<blocks, kThreads, 0, stream>>>(count, s.height, s.width, s.channels, s.block, x, y);
  } else {
    if (crd) to_depth_kernel<true><<<blocks, kThreads, 0, stream>>>(count, s.height, s.width, s.channels, s.block, x, y);
    else to_depth_kernel<false><<<blocks, kThreads, 0, stream>>>(count, s.height, s.width, s.channels, s.block, x, y);
  }
  check_cuda(cudaGetLastError(), "depth_to_space launch");
}

}  // namespace edgegan::cuda
