// Resize of NHWC maps on the GPU (kernels_cpu/resize/resize.h defines every mode,
// coordinate transform, nearest rounding, cubic coefficient and exclude_outside). The
// per-axis taps are the CPU's own tables (kernels::resize_build_tables), built once on the
// host; the device only gathers and blends, in the CPU's order: the H taps blend a
// column of input pixels, then the W taps blend those.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels_common/resize_shape.h"

namespace edgegan::cuda {

// Device copies of the forward tables of kernels::ResizeTables (taps per output index).
struct ResizeDeviceTables {
  int taps = 1;
  const int32_t* h_index = nullptr;  // [h.out][taps]
  const float* h_weight = nullptr;
  const int32_t* w_index = nullptr;  // [w.out][taps]
  const float* w_weight = nullptr;
};

// x != y.
void resize(const kernels::ResizeShape& s, const ResizeDeviceTables& t, const float* x, float* y, cudaStream_t stream);

}  // namespace edgegan::cuda
