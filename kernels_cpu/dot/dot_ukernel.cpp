#include "kernels_cpu/dot/dot_ukernel.h"

namespace edgegan::cpu {

namespace {
constexpr DotUkernel kNoDot{nullptr, 1, Isa::kScalar, "none"};
#if defined(EDGEGAN_HAVE_X86_KERNELS)
constexpr DotUkernel kDotAvx2{dot_ukernel_3x4__avx2, 3, Isa::kAvx2, "dot_ukernel_3x4__avx2"};
constexpr DotUkernel kDotAvx512{dot_ukernel_4x4__avx512, 4, Isa::kAvx512, "dot_ukernel_4x4__avx512"};
#endif
#if defined(EDGEGAN_HAVE_NEON_KERNELS)
constexpr DotUkernel kDotNeon{dot_ukernel_4x4__neon, 4, Isa::kNeon, "dot_ukernel_4x4__neon"};
#endif
#if defined(EDGEGAN_HAVE_NEON_FP16_KERNELS)
// Heads widen their fp16 weights to fp32 when transposing them: the NEON dot kernel.
constexpr DotUkernel kDotNeonFp16Arith{dot_ukernel_4x4__neon, 4, Isa::kNeonFp16Arith, "dot_ukernel_4x4__neon"};
#endif
}  // namespace

const DotUkernel& dot_ukernel(Isa isa) {
#if defined(EDGEGAN_HAVE_X86_KERNELS)
  if (isa == Isa::kAvx512) return kDotAvx512;
  if (isa == Isa::kAvx2) return kDotAvx2;
#endif
#if defined(EDGEGAN_HAVE_NEON_KERNELS)
  if (isa == Isa::kNeon) return kDotNeon;
#endif
#if defined(EDGEGAN_HAVE_NEON_FP16_KERNELS)
  if (isa == Isa::kNeonFp16Arith) return kDotNeonFp16Arith;
#endif
  (void)isa;
  return kNoDot;
}

const DotUkernel& dot_ukernel() { return dot_ukernel(active_isa()); }

}  // namespace edgegan::cpu
