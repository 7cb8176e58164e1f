#include "kernels_cuda/grid_sample/grid_sample.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "kernels_cuda/common/cuda_check.h"

namespace edgegan::cuda {
namespace {

using kernels::GridSampleMode;
using kernels::GridSampleShape;

constexpr int kThreads = 256;
int blocks_for(long long n) { return static_cast<int>(std::max<long long>(1, std::min<long long>((n + kThreads - 1) / kThreads, 1 << 20))); }

// A padded float index as a pixel index, -1 outside the map.
__device__ long long pixel_index(float c, long long size) { return c >= 0.f && c <= static_cast<float>(size - 1) ? static_cast<long long>(c) : -1; }

// Up to 4 taps along one axis (indices -1 outside: they read 0), as the CPU kernel finds them.
__device__ int axis_taps(const GridSampleShape& s, float c, long long size, long long idx[4], float w[4]) {
  for (int k = 0; k < 4; ++k) {
    idx[k] = -1;
    w[k] = 0.f;
  }
  if (s.mode == GridSampleMode::kBicubic) {
    const float base = floorf(c);
    kernels::grid_sample_cubic_weights(c - base, w);
    for (int k = 0; k < 4; ++k) idx[k] = pixel_index(kernels::grid_sample_pad(base - 1.f + static_cast<float>(k), size, s.padding, s.align_corners), size);
    return 4;
  }
  c = kernels::grid_sample_pad(c, size, s.padding, s.align_corners);
  if (s.mode == GridSampleMode::kNearest) {
    w[0] = 1.f;
    if (kernels::grid_sample_near(c, size)) idx[0] = pixel_index(nearbyintf(c), size);
    return 1;
  }
  if (kernels::grid_sample_near(c, size)) {
    const float base = floorf(c), f = c - base;
    w[0] = 1.f - f;
    w[1] = f;
    idx[0] = pixel_index(base, size);
    idx[1] = pixel_index(base + 1.f, size);
  }
  return 2;
}

__global__ void grid_sample_kernel(GridSampleShape s, long long count, const float* __restrict__ x, const float* __restrict__ grid, float* __restrict__ y) {
  const long long per_group = s.channels / s.groups;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long c = i % s.channels, pixel = i / s.channels;
    const long long ow = pixel % s.out_w, row = pixel / s.out_w;
    const long long oh = row % s.out_h, n = row / s.out_h;
    const long long g = c / per_group;
    const float* p = grid + pixel * 2 * s.groups;
    long long ix[4], iy[4];
    float wx[4], wy[4];
    const int taps = axis_taps(s, kernels::grid_sample_source(p[g], ow, s.in_w, s.out_w, s.align_corners, s.offsets), s.in_w, ix, wx);
    axis_taps(s, kernels::grid_sample_source(p[s.groups + g], oh, s.in_h, s.out_h, s.align_corners, s.offsets), s.in_h, iy, wy);
    float sum = 0.f;
    for (int a = 0; a < taps; ++a) {
      if (iy[a] < 0) continue;
      for (int b = 0; b < taps; ++b)
        if (ix[b] >= 0) sum += wy[a] * wx[b] * x[((n * s.in_h + iy[a]) * s.in_w + ix[b]) * s.channels + c];
    }
    y[i] = sum;
  }
}

}  // namespace

void grid_sample(const GridSampleShape& s, const float* x, const float* grid, float* y, cudaStream_t stream) {
  const long long count = s.batch * s.out_h * s.out_w * s.channels;
  if (count == 0) return;
  grid_sample_kernel<<<blocks_for(count), kThreads, 0, stream>>>(s, count, x, grid, y);
  check_cuda(cudaGetLastError(), "grid_sample launch");
}

}  // namespace edgegan::cuda
