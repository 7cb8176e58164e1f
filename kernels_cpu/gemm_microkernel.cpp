#include "kernels_cpu/gemm_microkernel.h"
#include "kernels_cpu/pixel_lanes_microkernel.h"

namespace edgegan::cpu {
namespace {

constexpr GemmMicrokernel kScalar{gemm_ukernel_4x16__scalar, gemm_ukernel_4x16__scalar_f16w, 4, 16, Isa::kScalar, "gemm_ukernel_4x16__scalar"};
#if defined(EDGEGAN_HAVE_X86_KERNELS)
constexpr GemmMicrokernel kAvx2{gemm_ukernel_6x16__avx2, gemm_ukernel_6x16__avx2_f16w, 6, 16, Isa::kAvx2, "gemm_ukernel_6x16__avx2"};
constexpr GemmMicrokernel kAvx512{gemm_ukernel_8x32__avx512, gemm_ukernel_8x32__avx512_f16w, 8, 32, Isa::kAvx512,
                                  "gemm_ukernel_8x32__avx512", false, gemm_ukernel_8x32__avx512_store};
#endif
#if defined(EDGEGAN_HAVE_NEON_KERNELS)
constexpr GemmMicrokernel kNeon{gemm_ukernel_8x8__neon, gemm_ukernel_8x8__neon_f16w, 8, 8, Isa::kNeon, "gemm_ukernel_8x8__neon"};
#endif
#if defined(EDGEGAN_HAVE_NEON_FP16_KERNELS)
// fp32 products on the NEON kernel; fp16 weights in half precision.
constexpr GemmMicrokernel kNeonFp16Arith{gemm_ukernel_8x8__neon,      gemm_ukernel_8x8__neonfp16arith_f16w, 8, 8, Isa::kNeonFp16Arith,
                                         "gemm_ukernel_8x8__neonfp16arith", true};
#endif

}  // namespace

const GemmMicrokernel& gemm_microkernel(Isa isa) {
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

const GemmMicrokernel& gemm_microkernel() { return gemm_microkernel(active_isa()); }

namespace {
constexpr DotMicrokernel kNoDot{nullptr, 1, Isa::kScalar, "none"};
#if defined(EDGEGAN_HAVE_X86_KERNELS)
constexpr DotMicrokernel kDotAvx2{dot_ukernel_3x4__avx2, 3, Isa::kAvx2, "dot_ukernel_3x4__avx2"};
constexpr DotMicrokernel kDotAvx512{dot_ukernel_4x4__avx512, 4, Isa::kAvx512, "dot_ukernel_4x4__avx512"};
#endif
#if defined(EDGEGAN_HAVE_NEON_KERNELS)
constexpr DotMicrokernel kDotNeon{dot_ukernel_4x4__neon, 4, Isa::kNeon, "dot_ukernel_4x4__neon"};
#endif
#if defined(EDGEGAN_HAVE_NEON_FP16_KERNELS)
// Heads widen their fp16 weights to fp32 when transposing them: the NEON dot kernel.
constexpr DotMicrokernel kDotNeonFp16Arith{dot_ukernel_4x4__neon, 4, Isa::kNeonFp16Arith, "dot_ukernel_4x4__neon"};
#endif
}  // namespace

const DotMicrokernel& dot_microkernel(Isa isa) {
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

const DotMicrokernel& dot_microkernel() { return dot_microkernel(active_isa()); }

}  // namespace edgegan::cpu

namespace edgegan::cpu {
namespace {
constexpr PixelLanesMicrokernel kNoPixelLanes{nullptr, nullptr, nullptr, nullptr, Isa::kScalar, "none"};
#if defined(EDGEGAN_HAVE_X86_KERNELS)
constexpr PixelLanesMicrokernel kPixelLanesAvx512{pixel_lanes_ukernel_4phase__avx512, planes_from_pixels_16x16__avx512,
                                                  interleave_phases_16__avx512, activate__avx512, Isa::kAvx512,
                                                  "pixel_lanes_ukernel_4phase__avx512"};
#endif
}  // namespace

const PixelLanesMicrokernel& pixel_lanes_microkernel(Isa isa) {
#if defined(EDGEGAN_HAVE_X86_KERNELS)
  if (isa == Isa::kAvx512) return kPixelLanesAvx512;
#endif
  (void)isa;
  return kNoPixelLanes;
}

const PixelLanesMicrokernel& pixel_lanes_microkernel() { return pixel_lanes_microkernel(active_isa()); }

}  // namespace edgegan::cpu
