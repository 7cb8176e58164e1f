#include "kernels_cuda/unary_math/unary_math.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "kernels_cuda/common/cuda_check.h"

namespace edgegan::cuda {
namespace {

constexpr int kThreads = 256;
int blocks_for(long long n) { return static_cast<int>(std::max<long long>(1, std::min<long long>((n + kThreads - 1) / kThreads, 1 << 20))); }

__device__ __forceinline__ float apply(kernels::UnaryMathOp op, float e, float x) {
  switch (op) {
    case kernels::UnaryMathOp::kSqrt: return sqrtf(x);
    case kernels::UnaryMathOp::kRsqrt: return 1.f / sqrtf(x);
    case kernels::UnaryMathOp::kExp: return expf(x);
    case kernels::UnaryMathOp::kLog: return logf(x);
    case kernels::UnaryMathOp::kErf: return erff(x);
    case kernels::UnaryMathOp::kPow:
      if (e == 2.f) return x * x;
      if (e == 0.5f) return sqrtf(x);
      if (e == 1.f) return x;
      return powf(x, e);
    case kernels::UnaryMathOp::kAbs: return fabsf(x);
    case kernels::UnaryMathOp::kNeg: return -x;
  }
  return x;
}

__global__ void unary_math_kernel(long long n, kernels::UnaryMathOp op, float e, const float* x, float* y) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n; i += static_cast<long long>(gridDim.x) * blockDim.x)
    y[i] = apply(op, e, x[i]);
}

}  // namespace

void unary_math(int64_t count, kernels::UnaryMathOp op, float exponent, const float* x, float* y, cudaStream_t stream) {
  if (count <= 0) return;
  unary_math_kernel<<<blocks_for(count), kThreads, 0, stream>>>(count, op, exponent, x, y);
  check_cuda(cudaGetLastError(), "unary_math launch");
}

}  // namespace edgegan::cuda
