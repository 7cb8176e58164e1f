// What the CUDA kernel tests share: a skip with CUDA's reason where no GPU is present,
// device copies of host vectors, and the random epilogues and axes the suites draw.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "kernels_common/conv_geometry.h"
#include "kernels_cpu/common/epilogue.h"
#include "kernels_cuda/common/activation.h"
#include "kernels_cuda/common/cuda_check.h"
#include "tests/test_util.h"

namespace edgegan::testing {

inline bool gpu_present(std::string* why) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    *why = e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device";
    return false;
  }
  return true;
}

#define SKIP_WITHOUT_GPU()                                                       \
  do {                                                                           \
    std::string why;                                                             \
    if (!::edgegan::testing::gpu_present(&why)) GTEST_SKIP() << "no GPU: " << why; \
  } while (0)

// Device copy of a host vector, freed with the object.
template <typename T>
class Device {
 public:
  explicit Device(const std::vector<T>& host) : n_(std::max<size_t>(host.size(), 1)) {
    cuda::check_cuda(cudaMalloc(reinterpret_cast<void**>(&p_), n_ * sizeof(T)), "malloc");
    if (!host.empty()) cuda::check_cuda(cudaMemcpy(p_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "upload");
  }
  explicit Device(size_t n) : Device(std::vector<T>(n)) {}
  ~Device() { cudaFree(p_); }
  T* get() const { return p_; }
  std::vector<T> host(size_t n) const {
    std::vector<T> out(n);
    cuda::check_cuda(cudaMemcpy(out.data(), p_, n * sizeof(T), cudaMemcpyDeviceToHost), "download");
    return out;
  }

 private:
  T* p_ = nullptr;
  size_t n_;
};

// Activation `trial % 15`: every one the device epilogues apply (all but PRelu, which
// the op kernels run as a pass of the PRelu kernel: FusedPRelu), with parameters that
// exercise each: LeakyRelu's slope, Selu's two, Clip's bounds, HardSigmoid's slope and offset.
inline cpu::Epilogue epilogue_for(int trial, const float* bias) {
  cpu::Epilogue e;
  e.bias = bias;
  const int k = trial % (cpu::kActivationCount - 1);
  e.activation = static_cast<cpu::Activation>(k < static_cast<int>(cpu::Activation::kPRelu) ? k : k + 1);
  e.alpha = 0.2f;
  switch (e.activation) {
    case cpu::Activation::kSelu: e.alpha = 1.6732632f, e.beta = 1.0507010f; break;
    case cpu::Activation::kClip: e.alpha = -0.5f, e.beta = 0.7f; break;
    case cpu::Activation::kHardSigmoid: e.alpha = 0.2f, e.beta = 0.5f; break;
    default: break;
  }
  return e;
}
inline cuda::ActivationParams device_activation(const cpu::Epilogue& e) { return {e.activation, e.alpha, e.beta}; }

// A random convolution axis (transposed: the output from output_padding below
// max(stride, dilation), as ONNX requires).
inline cpu::ConvAxis random_axis(std::mt19937& rng, bool transposed) {
  cpu::ConvAxis a;
  a.in = uniform_int(rng, 1, 12);
  a.kernel = uniform_int(rng, 1, 5);
  a.stride = uniform_int(rng, 1, 3);
  a.dilation = uniform_int(rng, 1, 2);
  a.pad_begin = uniform_int(rng, 0, static_cast<int>(a.kernel) - 1);
  a.pad_end = uniform_int(rng, 0, static_cast<int>(a.kernel) - 1);
  const int out_pad = uniform_int(rng, 0, static_cast<int>(std::max(a.stride, a.dilation)) - 1);
  a.out = transposed ? cpu::conv_transpose_output_length(a.in, a.kernel, a.stride, a.dilation, a.pad_begin, a.pad_end, out_pad)
                     : cpu::conv_output_length(a.in, a.kernel, a.stride, a.dilation, a.pad_begin, a.pad_end);
  return a;
}

}  // namespace edgegan::testing
