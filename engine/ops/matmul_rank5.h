// MatMul's shape at every rank it takes: ranks 3 and 4 as matmul_shape() gives them, and
// rank 5, [N, G, H, M, K] · [N, G, H, K, P] row-major (window attention with its windows
// unfolded from the batch), its dims 1 and 2 merged into the second batch dim (an operand
// of [N, 1, 1, K, P] broadcasts). Every backend's MatMul kernel takes it as it is.
#pragma once

#include "engine/ops/op_kernel_util.h"

namespace edgegan {

inline cpu::MatMulShape matmul_shape_any_rank(const KernelArgs& args, const schema::MatMul& op) {
  const TensorDesc &ta = args.tensor(op.a()), &tb = args.tensor(op.b()), &ty = args.tensor(op.output());
  if (ty.dims.size() != 5) return matmul_shape(args, op);
  auto strides = [](const std::vector<int64_t>& d) {  // [_, G, H, R, C] row-major
    cpu::MatrixStrides s;
    s.row = d[4], s.col = 1;
    s.batch[1] = d[1] * d[2] == 1 ? 0 : d[3] * d[4];
    s.batch[0] = d[1] * d[2] * d[3] * d[4];
    return s;
  };
  cpu::MatMulShape s;
  s.batch[0] = args.batch;
  s.batch[1] = ty.dims[1] * ty.dims[2];
  s.m = ty.dims[3], s.n = ty.dims[4], s.k = ta.dims[4];
  s.a = strides(ta.dims);
  s.b = strides(tb.dims);
  s.y = strides(ty.dims);
  return s;
}

}  // namespace edgegan
