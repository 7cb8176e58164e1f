// The data movement of a Reshape whose storage layouts differ: between a logical
// NCHW order and NHWC storage. (A Reshape between tensors stored in logical order
// moves nothing; the engine aliases them.)
#pragma once

#include <cstdint>

namespace edgegan::cpu {

void nchw_to_nhwc(int64_t n, int64_t c, int64_t h, int64_t w, const float* x, float* y);
void nhwc_to_nchw(int64_t n, int64_t c, int64_t h, int64_t w, const float* x, float* y);

}  // namespace edgegan::cpu
