// The shapes of an element-wise y = a (op) b with ONNX multidirectional broadcasting,
// over the tensors' storage dimensions (NHWC for images): every operand has the
// output's rank and, per dimension, either the output's size or 1. Both backends'
// binary kernels take it.
#pragma once

#include <cstdint>

namespace edgegan::kernels {

enum class BinaryOp : int { kAdd = 0, kSub = 1, kMul = 2, kDiv = 3 };

inline constexpr int kBinaryMaxRank = 8;

struct BinaryShape {
  int rank = 0;
  int64_t out[kBinaryMaxRank] = {};
  int64_t a[kBinaryMaxRank] = {};
  int64_t b[kBinaryMaxRank] = {};
};

// Every operand dimension is the output's or 1, the output's is the larger, sizes >= 1.
bool binary_shape_valid(const BinaryShape& s);
int64_t binary_elements(const int64_t* dims, int rank);

}  // namespace edgegan::kernels

// The CPU kernels name these unqualified, and callers as cpu::; one definition.
namespace edgegan::cpu {
using namespace kernels;
}  // namespace edgegan::cpu
