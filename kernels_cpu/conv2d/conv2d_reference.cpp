#include "kernels_cpu/conv2d/conv2d_reference.h"
#include "kernels_cpu/conv2d/conv2d_grouped.h"

namespace edgegan::cpu {

// The grouped form's definition at one group (conv2d_grouped.h).
void conv2d_reference(const ConvShape& s, const float* x, const float* w, float* y, const Epilogue& ep) {
  conv2d_grouped_reference(s, 1, x, w, y, ep);
}

void pack_conv2d_weights(const ConvShape& s, const float* w, float* packed) { pack_conv2d_grouped_weights(s, 1, w, packed); }

}  // namespace edgegan::cpu
