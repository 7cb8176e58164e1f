// The shape of a strided slice along one axis of a row-major tensor viewed as
// [outer][length][inner]: y[o][j][i] = x[o][start + j*step][i] for j < count (step may
// be negative). Both backends' slice kernels take it.
#pragma once

#include <cstdint>

namespace edgegan::kernels {

struct SliceShape {
  int64_t outer = 1, length = 1, inner = 1;  // the input as [outer][length][inner]
  int64_t start = 0, step = 1, count = 1;    // the rows of the axis the output keeps
};

}  // namespace edgegan::kernels

// The CPU kernels name these unqualified, and callers as cpu::; one definition.
namespace edgegan::cpu {
using namespace kernels;
}  // namespace edgegan::cpu
