// The shape of an average or max pooling of NHWC maps (ONNX AveragePool, MaxPool and
// their global forms), which both backends' pooling kernels take. Window taps of
// output o on one axis: i = o*stride - pad_begin + t*dilation, t in [0, kernel).
#pragma once

#include <cstdint>

#include "kernels_common/conv_geometry.h"

namespace edgegan::kernels {

enum class PoolKind { kAverage = 0, kMax = 1 };

struct PoolShape {
  int64_t batch = 1;
  int64_t channels = 0;
  ConvAxis h, w;  // in, kernel, stride, dilation, pads, out
};

// Output length: floor (or ceil) of (in + pads - dilation*(kernel-1) - 1) / stride, plus 1;
// with ceil_mode, a last window that would start in the end padding is dropped.
int64_t pool_output_length(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_begin, int64_t pad_end, bool ceil_mode);

}  // namespace edgegan::kernels

// The CPU kernels name these unqualified, and callers as cpu::; one definition.
namespace edgegan::cpu {
using namespace kernels;
}  // namespace edgegan::cpu
