// Dot micro-kernels, named dot_ukernel_MRxNR__isa, one file per ISA built with only
// its own flags; dot_ukernel() picks the active family at run time (cpu_isa.h).
#pragma once

#include <cstdint>

#include "kernels_cpu/common/cpu_isa.h"

namespace edgegan::cpu {

// Narrow-output dot micro-kernels, for layers with at most 4 output channels (the
// RGB / grey heads), where a GEMM tile would leave 13 of 16 lanes idle. They
// vectorise along the reduction instead, over several taps at once, and reduce
// across lanes once per tile:
//   for i < mr, j < nr:
//     c[i * ldc + j] += sum over t < taps, p < k of a[t][i * lda + p] * bt[t][j * k + p]
// Row i of tap t is a[t] + i * lda: consecutive output pixels of one phase row read
// consecutive input pixels. bt[t] is tap t's weights transposed to [nr][k].
// Any mr (the kernel runs the rows MR at a time, so a whole run of pixels is one
// call); nr <= 4.
using DotUkernelFn = void (*)(int64_t k, int taps, int mr, int nr, const float* const* a, int64_t lda,
                                  const float* const* bt, float* c, int64_t ldc);

struct DotUkernel {
  DotUkernelFn run;  // nullptr: the family has none (callers use the GEMM kernel)
  int mr;
  Isa isa;
  const char* name;
};
constexpr int kDotMaxColumns = 4;

const DotUkernel& dot_ukernel();
const DotUkernel& dot_ukernel(Isa isa);

#if defined(EDGEGAN_HAVE_X86_KERNELS)
void dot_ukernel_3x4__avx2(int64_t k, int taps, int mr, int nr, const float* const* a, int64_t lda,
                           const float* const* bt, float* c, int64_t ldc);
void dot_ukernel_4x4__avx512(int64_t k, int taps, int mr, int nr, const float* const* a, int64_t lda,
                             const float* const* bt, float* c, int64_t ldc);
#endif
#if defined(EDGEGAN_HAVE_NEON_KERNELS)
void dot_ukernel_4x4__neon(int64_t k, int taps, int mr, int nr, const float* const* a, int64_t lda,
                           const float* const* bt, float* c, int64_t ldc);
#endif

}  // namespace edgegan::cpu
