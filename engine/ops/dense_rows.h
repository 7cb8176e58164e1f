// Dense's rows, which every backend's Dense kernel computes alike.
#pragma once

#include <cstdint>

#include "engine/ops/op_def.h"

namespace edgegan {

// The batch times the input's dims between the batch and the features (a Linear over the
// last axis of row-major tokens [N, L, in] has N·L rows).
inline int64_t dense_rows(const KernelArgs& a, const schema::Dense& op) {
  const TensorDesc& x = a.tensor(op.input());
  int64_t rows = a.batch;
  for (size_t k = 1; k + 1 < x.dims.size(); ++k) rows *= x.dims[k];
  return rows;
}

}  // namespace edgegan
