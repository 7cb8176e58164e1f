// The CPU's fp16 sessions (half storage): the arena holds float tensors as halves
// (session_plan.cpp's tensor_bytes) while the op kernels read and write floats. An op's
// fp32 kernel is wrapped in an adapter that widens its half inputs into float copies in
// its own workspace, runs the fp32 kernel on a tensor table pointing at the copies, and
// narrows the output back to halves (round to nearest even). Int64 tensors (labels) are
// read in place; a kernel whose output aliases its input (a Reshape that keeps order) is
// not wrapped, nothing moves. docs/cpu-precision.md has the design.
#pragma once

#include <memory>

#include "engine/ops/op_def.h"

namespace edgegan {

// `fp32` wrapped for an fp16 plan (or returned as it is where nothing is converted).
std::unique_ptr<OpKernel> half_storage_kernel(std::unique_ptr<OpKernel> fp32, const OpDef& def, const KernelArgs& args);

}  // namespace edgegan
