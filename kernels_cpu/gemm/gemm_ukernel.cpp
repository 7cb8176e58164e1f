#include "kernels_cpu/gemm/gemm_ukernel.h"

namespace edgegan::cpu {
namespace {

constexpr GemmUkernel kScalar{gemm_ukernel_4x16__scalar, gemm_ukernel_4x16__scalar_f16w, 4, 16, Isa::kScalar, "gemm_ukernel_4x16__scalar"};
#if defined(EDGEGAN_HAVE_X86_KERNELS)
constexpr GemmUkernel kAvx2{gemm_ukernel_6x16__avx2, gemm_ukernel_6x16__avx2_f16w, 6, 16, Isa::kAvx2, "gemm_ukernel_6x16__avx2"};
constexpr GemmUkernel kAvx512{gemm_ukernel_8x32__avx512, gemm_ukernel_8x32__avx512_f16w, 8, 32, Isa::kAvx512,
                                  "gemm_ukernel_8x32__avx512", false, gemm_ukernel_8x32__avx512_store};
#endif
#if defined(EDGEGAN_HAVE_NEON_KERNELS)
constexpr GemmUkernel kNeon{gemm_ukernel_8x8__neon, gemm_ukernel_8x8__neon_f16w, 8, 8, Isa::kNeon, "gemm_ukernel_8x8__neon"};
#endif
#if defined(EDGEGAN_HAVE_NEON_FP16_KERNELS)
// fp32 products on the NEON kernel; fp16 weights, and an fp16 session's halves, in half precision.
constexpr GemmUkernel kNeonFp16Arith{gemm_ukernel_8x8__neon, gemm_ukernel_8x8__neonfp16arith_f16w, 8, 8, Isa::kNeonFp16Arith,
                                     "gemm_ukernel_8x8__neonfp16arith", true, nullptr, gemm_ukernel_8x8__neonfp16arith_f16};
#endif

}  // namespace

const GemmUkernel& gemm_ukernel(Isa isa) {
  switch (isa) {
#if defined(EDGEGAN_HAVE_X86_KERNELS)
    case Isa::kAvx512: return kAvx512;
    case Isa::kAvx2: return kAvx2;
#endif
#if defined(EDGEGAN_HAVE_NEON_KERNELS)
    case Isa::kNeon: return kNeon;
#endif
#if defined(EDGEGAN_HAVE_NEON_FP16_KERNELS)
    case Isa::kNeonFp16Arith: return kNeonFp16Arith;
#endif
    default: return kScalar;
  }
}

const GemmUkernel& gemm_ukernel() { return gemm_ukernel(active_isa()); }

}  // namespace edgegan::cpu
