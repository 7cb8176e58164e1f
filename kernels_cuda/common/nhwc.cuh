// Index arithmetic the element-per-thread kernels share.
#pragma once

namespace edgegan::cuda {

// Element i of an [N][height][width][channels] tensor: its image, row, column, channel.
struct NhwcIndex {
  long long n;
  int h, w, c;
};
__device__ __forceinline__ NhwcIndex nhwc_index(long long i, int height, int width, int channels) {
  NhwcIndex at;
  at.c = static_cast<int>(i % channels);
  long long rest = i / channels;
  at.w = static_cast<int>(rest % width);
  rest /= width;
  at.h = static_cast<int>(rest % height);
  at.n = rest / height;
  return at;
}

// The input position a transposed convolution's tap reads for output position o on one
// axis (o = i * stride - pad + tap * dilation), or -1 where none does.
__device__ __forceinline__ int transposed_source(int o, int pad, int tap, int dilation, int stride, int in) {
  const int a = o + pad - tap * dilation;
  if (a < 0 || a % stride) return -1;
  const int i = a / stride;
  return i < in ? i : -1;
}

}  // namespace edgegan::cuda
