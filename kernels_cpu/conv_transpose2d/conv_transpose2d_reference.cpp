#include "kernels_cpu/conv_transpose2d/conv_transpose2d_reference.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_grouped.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"

namespace edgegan::cpu {

// The grouped form's definition at one group (conv_transpose2d_grouped.h).
void conv_transpose2d_reference(const ConvShape& s, const float* x, const float* w, float* y, const Epilogue& ep) {
  conv_transpose2d_grouped_reference(s, 1, x, w, y, ep);
}

}  // namespace edgegan::cpu
