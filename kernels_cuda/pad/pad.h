// Spatial padding of NHWC maps on the GPU (kernels_cpu/pad/pad.h defines it). Each
// axis's output -> input index map is made on the host once (kernels::pad_source, the
// CPU's own definition), so every mode, asymmetric and negative pads included, is one
// gather on the device.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "kernels_common/pad_shape.h"

namespace edgegan::cuda {

// kernels::pad_source for every output index of an axis (-1: the constant fill).
inline std::vector<int32_t> pad_source_table(const kernels::PadAxis& axis, kernels::PadMode mode) {
  std::vector<int32_t> table(static_cast<size_t>(axis.out()));
  for (int64_t o = 0; o < axis.out(); ++o) table[static_cast<size_t>(o)] = static_cast<int32_t>(kernels::pad_source(axis, mode, o));
  return table;
}

// y[n][oh][ow][c] = x[n][h_source[oh]][w_source[ow]][c], or s.value where either
// source is -1. h_source / w_source: device copies of pad_source_table (x != y).
void pad(const kernels::PadShape& s, const int32_t* h_source, const int32_t* w_source, const float* x, float* y, cudaStream_t stream);

}  // namespace edgegan::cuda
