// GEMM micro-kernels: the innermost register tile every CPU product runs on.
//
// Contract (all families):  for i < mr, j < nr:
//     c[i][j] += sum over p < k of a[i][p] * b[p * ldb + j]
// with mr <= the family's MR and nr <= its NR. Rows are given as pointers, so a
// caller can feed pixels that are not evenly spaced (the pixels of one split
// transposed-convolution phase, trimmed of the taps that would read padding) and write
// them straight to their strided output positions (an "indirect" GEMM). Each A
// row holds k contiguous floats; B is read in place, NR columns at a time, in
// the [k][ldb] layout the converter wrote: nothing is packed per run. Partial
// tiles (mr < MR, nr < NR) are handled inside the kernel with masks, so no
// padding zero is ever loaded or multiplied.
//
// Families, named operator_MRxNR__isa as in XNNPACK: one file per ISA, each
// compiled with only its own ISA flags. The dispatcher picks one at run time
// (cpu_isa.h).
#pragma once

#include <cstdint>

#include "kernels_cpu/common/cpu_isa.h"
#include "kernels_cpu/common/epilogue.h"

namespace edgegan::cpu {

using GemmUkernelFn = void (*)(int64_t k, int mr, int nr, const float* const* a, const float* b, int64_t ldb,
                                   float* const* c);
// The same product with B stored as IEEE halves (fp16 weights, `edgegan-convert
// --weights fp16`): each B row is widened to float in registers as it is loaded,
// so half the weight bytes stream from memory; the arithmetic stays fp32.
using GemmUkernelF16wFn = void (*)(int64_t k, int mr, int nr, const float* const* a, const uint16_t* b, int64_t ldb,
                                       float* const* c);

// The last product of an output tile fused with its store: the sums start from the
// tile's partial sums in c, take the products one by one, and go from registers
// straight to the output rows, with bias and activation:
//     out[i][j] = activation(c[i][j] + sum over p < k of a[i][p] * b[p * ldb + j] + bias[j])
// for i < mr, j < nr (ep.bias points at column 0 of the tile, or is nullptr: no bias
// added). out may be c itself. The sums round as a chain from c (the accumulate kernel
// adds c to the products' sum), so a caller that stores some tiles later, from
// scratch, runs their last product through this too, with out = c and no epilogue,
// and then gets the same bits from store_with_epilogue. Activations kNone, kRelu and
// kLeakyRelu (gemm_store_applies in gemm.h).
// Float B only: fp16 weights take the accumulate-then-store path (a second set of
// store tiles would double the fused store's code; whether fp16 layers would gain
// was not measured).
using GemmStoreFn = void (*)(int64_t k, int mr, int nr, const float* const* a, const float* b, int64_t ldb,
                             const float* const* c, float* const* out, const Epilogue& ep);

// An fp16 session's product in half arithmetic: A and B halves, c floats as above
// (neonfp16arith only; the sums' rounding is the f16w kernel's).
using GemmUkernelF16Fn = void (*)(int64_t k, int mr, int nr, const uint16_t* const* a, const uint16_t* b, int64_t ldb,
                                  float* const* c);

struct GemmUkernel {
  GemmUkernelFn run;
  GemmUkernelF16wFn run_f16w;  // B in fp16
  int mr;  // rows per tile
  int nr;  // columns per tile
  Isa isa;
  const char* name;
  // run_f16w computes in half precision (neonfp16arith): accurate to ~1e-3
  // relative instead of float rounding; tests widen their tolerance for it.
  bool f16w_half_arithmetic = false;
  // The fused store, where the family has one (nullptr: callers accumulate, then store).
  GemmStoreFn run_store = nullptr;
  // A and B in fp16, half arithmetic, where the family has it (nullptr: none).
  GemmUkernelF16Fn run_f16 = nullptr;
};

// The kernel of the active family (active_isa()).
const GemmUkernel& gemm_ukernel();
// The kernel of a given family (must be supported).
const GemmUkernel& gemm_ukernel(Isa isa);

void gemm_ukernel_4x16__scalar(int64_t k, int mr, int nr, const float* const* a, const float* b, int64_t ldb,
                               float* const* c);
void gemm_ukernel_4x16__scalar_f16w(int64_t k, int mr, int nr, const float* const* a, const uint16_t* b, int64_t ldb,
                                    float* const* c);
#if defined(EDGEGAN_HAVE_X86_KERNELS)
void gemm_ukernel_6x16__avx2(int64_t k, int mr, int nr, const float* const* a, const float* b, int64_t ldb,
                             float* const* c);
void gemm_ukernel_6x16__avx2_f16w(int64_t k, int mr, int nr, const float* const* a, const uint16_t* b, int64_t ldb,
                                  float* const* c);
void gemm_ukernel_8x32__avx512(int64_t k, int mr, int nr, const float* const* a, const float* b, int64_t ldb,
                               float* const* c);
void gemm_ukernel_8x32__avx512_f16w(int64_t k, int mr, int nr, const float* const* a, const uint16_t* b, int64_t ldb,
                                    float* const* c);
void gemm_ukernel_8x32__avx512_store(int64_t k, int mr, int nr, const float* const* a, const float* b, int64_t ldb,
                                     const float* const* c, float* const* out, const Epilogue& ep);
#endif
#if defined(EDGEGAN_HAVE_NEON_KERNELS)
void gemm_ukernel_8x8__neon(int64_t k, int mr, int nr, const float* const* a, const float* b, int64_t ldb,
                            float* const* c);
void gemm_ukernel_8x8__neon_f16w(int64_t k, int mr, int nr, const float* const* a, const uint16_t* b, int64_t ldb,
                                 float* const* c);
#endif
#if defined(EDGEGAN_HAVE_NEON_FP16_KERNELS)
void gemm_ukernel_8x8__neonfp16arith_f16w(int64_t k, int mr, int nr, const float* const* a, const uint16_t* b, int64_t ldb,
                                          float* const* c);
void gemm_ukernel_8x8__neonfp16arith_f16(int64_t k, int mr, int nr, const uint16_t* const* a, const uint16_t* b, int64_t ldb,
                                         float* const* c);
#endif

}  // namespace edgegan::cpu
