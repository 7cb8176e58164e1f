#include "kernels_cuda/binary/binary.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "kernels_cuda/common/cuda_check.h"

namespace edgegan::cuda {
namespace {

constexpr int kThreads = 256;
int blocks_for(long long n) { return static_cast<int>(std::max<long long>(1, std::min<long long>((n + kThreads - 1) / kThreads, 1 << 20))); }

// The output's dimensions with each operand's strides (0 along a broadcast one),
// collapsed: passed by value to the kernel.
struct Strided {
  int rank = 0;
  long long d[kernels::kBinaryMaxRank] = {};
  long long sa[kernels::kBinaryMaxRank] = {};
  long long sb[kernels::kBinaryMaxRank] = {};
};

Strided collapse(const kernels::BinaryShape& s) {
  long long sta[kernels::kBinaryMaxRank], stb[kernels::kBinaryMaxRank];
  long long ra = 1, rb = 1;
  for (int k = s.rank - 1; k >= 0; --k) {
    sta[k] = ra, stb[k] = rb;
    ra *= s.a[k], rb *= s.b[k];
  }
  // Innermost first, reversed at the end.
  Strided inner_first;
  int n = 0;
  for (int k = s.rank - 1; k >= 0; --k) {
    if (s.out[k] == 1) continue;
    const long long ka = s.a[k] == 1 ? 0 : sta[k], kb = s.b[k] == 1 ? 0 : stb[k];
    if (n > 0 && ka == inner_first.sa[n - 1] * inner_first.d[n - 1] && kb == inner_first.sb[n - 1] * inner_first.d[n - 1]) {
      inner_first.d[n - 1] *= s.out[k];  // merged: the inner stride stays
      continue;
    }
    inner_first.d[n] = s.out[k], inner_first.sa[n] = ka, inner_first.sb[n] = kb;
    ++n;
  }
  Strided c;
  c.rank = n;
  for (int k = 0; k < n; ++k) c.d[k] = inner_first.d[n - 1 - k], c.sa[k] = inner_first.sa[n - 1 - k], c.sb[k] = inner_first.sb[n - 1 - k];
  return c;
}

template <kernels::BinaryOp Op>
__device__ __forceinline__ float apply(float a, float b) {
  if constexpr (Op == kernels::BinaryOp::kAdd) return a + b;
  else if constexpr (Op == kernels::BinaryOp::kSub) return a - b;
  else if constexpr (Op == kernels::BinaryOp::kMul) return a * b;
  else return a / b;  // IEEE division: the build does not use fast math
}

// Both operands of the output's shape: a flat loop (in place is safe: each element is
// read and written by one thread).
template <kernels::BinaryOp Op>
__global__ void same_shape_kernel(long long count, const float* a, const float* b, float* y) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count; i += static_cast<long long>(gridDim.x) * blockDim.x)
    y[i] = apply<Op>(a[i], b[i]);
}

template <kernels::BinaryOp Op>
__global__ void broadcast_kernel(long long count, Strided s, const float* a, const float* b, float* y) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    long long rest = i, oa = 0, ob = 0;
    for (int k = s.rank - 1; k >= 0; --k) {
      const long long index = rest % s.d[k];
      rest /= s.d[k];
      oa += index * s.sa[k];
      ob += index * s.sb[k];
    }
    y[i] = apply<Op>(a[oa], b[ob]);
  }
}

template <kernels::BinaryOp Op>
void launch(const Strided& s, long long count, const float* a, const float* b, float* y, cudaStream_t stream) {
  if (s.rank == 1 && s.sa[0] == 1 && s.sb[0] == 1) same_shape_kernel<Op><<<blocks_for(count), kThreads, 0, stream>>>(count, a, b, y);
  else broadcast_kernel<Op><<<blocks_for(count), kThreads, 0, stream>>>(count, s, a, b, y);
}

}  // namespace

void binary(const kernels::BinaryShape& s, kernels::BinaryOp op, const float* a, const float* b, float* y, cudaStream_t stream) {
  const long long count = kernels::binary_elements(s.out, s.rank);
  if (count <= 0) return;
  const Strided c = collapse(s);
  switch (op) {
    case kernels::BinaryOp::kAdd: launch<kernels::BinaryOp::kAdd>(c, count, a, b, y, stream); break;
    case kernels::BinaryOp::kSub: launch<kernels::BinaryOp::kSub>(c, count, a, b, y, stream); break;
    case kernels::BinaryOp::kMul: launch<kernels::BinaryOp::kMul>(c, count, a, b, y, stream); break;
    case kernels::BinaryOp::kDiv: launch<kernels::BinaryOp::kDiv>(c, count, a, b, y, stream); break;
  }
  check_cuda(cudaGetLastError(), "binary launch");
}

}  // namespace edgegan::cuda
