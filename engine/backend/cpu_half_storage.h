// The CPU's fp16 sessions (half storage): the arena holds float tensors as halves
// (session_plan.cpp's tensor_bytes) while the op kernels read and write floats. An op's
// fp32 kernel is wrapped in an adapter that widens its half inputs into float copies in
// its own workspace, runs the fp32 kernel on a tensor table pointing at the copies, and
// narrows the output back to halves (round to nearest even). Int64 tensors (labels) are
// read in place; a kernel whose output aliases its input (a Reshape that keeps order) is
// not wrapped, nothing moves; nor is a kernel that reads and writes halves itself (a
// native route). docs/cpu-precision.md has the design.
#pragma once

#include <memory>

#include "engine/ops/op_def.h"

namespace edgegan {

// An op's CPU kernel for an fp16 plan: its native route where the kernel built for fp16
// says it stores halves (OpKernel::stores_halves, engine/ops/half_route.h), else its fp32
// kernel wrapped (or as it is where nothing is converted).
std::unique_ptr<OpKernel> half_storage_kernel(const OpDef& def, const KernelArgs& args);

// The adapter around an fp32 kernel `fp32` built for op `def` of `args` (as the backend
// wraps one; a kernel whose output aliases its input comes back as it is).
std::unique_ptr<OpKernel> half_storage_adapter(std::unique_ptr<OpKernel> fp32, const OpDef& def, const KernelArgs& args);

// Tests: off, every kernel goes through the adapter (the native routes are compared
// with it); on by default. Read when a kernel is built.
void set_half_storage_native_routes(bool on);

}  // namespace edgegan
