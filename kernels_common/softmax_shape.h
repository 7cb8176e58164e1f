// The shape of a softmax along one axis of a tensor viewed as [outer, axis, inner].
// Both backends' softmax kernels take it.
#pragma once

#include <cstdint>

namespace edgegan::kernels {

struct SoftmaxShape {
  int64_t outer = 1, axis = 1, inner = 1;
};

}  // namespace edgegan::kernels

namespace edgegan::cpu {
using namespace kernels;
}  // namespace edgegan::cpu
