// CUDA errors as exceptions: every runtime call the backend makes goes through
// check_cuda, so a failure names the call and CUDA's own text.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace edgegan::cuda {

struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw CudaError(std::string("CUDA ") + what + ": " + cudaGetErrorString(e));
}

}  // namespace edgegan::cuda
