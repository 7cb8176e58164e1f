// What the data-movement op tests (pad, resize, pool, ...) share: a comparison that
// fails on NaN (outputs start as NaN, so an element the kernel never wrote shows), and
// a device output pre-filled with NaN.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/kernels_cuda/cuda_test_util.h"

namespace edgegan::testing {

// Every |got - want| <= tolerance (0: bit-identical values), NaN nowhere.
inline ::testing::AssertionResult all_close(const std::vector<float>& got, const std::vector<float>& want, float tolerance) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::abs(got[i] - want[i]) <= tolerance))
      return ::testing::AssertionFailure() << "element " << i << " of " << got.size() << ": " << got[i] << " != " << want[i];
  return ::testing::AssertionSuccess();
}

inline std::vector<float> nan_filled(size_t n) { return std::vector<float>(n, NAN); }

// Downloads `n` floats after the default stream's work has finished.
inline std::vector<float> result_of(const Device<float>& y, size_t n) {
  cuda::check_cuda(cudaDeviceSynchronize(), "run");
  return y.host(n);
}

}  // namespace edgegan::testing
