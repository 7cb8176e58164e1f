// What the CUDA kernel tests share: a skip with CUDA's reason where no GPU is present,
// and device copies of host vectors.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kernels_cuda/common/cuda_check.h"

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

}  // namespace edgegan::testing
