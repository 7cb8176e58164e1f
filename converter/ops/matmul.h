// The product of two run-time tensors, which Dense's lowering (the owner of ONNX MatMul,
// for x · W with constant weights) hands over when the second operand is computed.
#pragma once

#include "converter/lowering.h"

namespace edgegan::converter {

void infer_matmul(RuntimeNode& rn);
void lower_matmul(const Node& n, Lowering& l);

}  // namespace edgegan::converter
