#include "kernels_cpu/pixel_lanes/pixel_lanes_ukernel.h"

#include "kernels_cpu/activation/activation_run.h"

namespace edgegan::cpu {
namespace {
constexpr PixelLanesUkernel kNoPixelLanes{nullptr, nullptr, nullptr, nullptr, Isa::kScalar, "none"};
#if defined(EDGEGAN_HAVE_X86_KERNELS)
constexpr PixelLanesUkernel kPixelLanesAvx512{pixel_lanes_ukernel_4phase__avx512, planes_from_pixels_16x16__avx512,
                                                  interleave_phases_16__avx512, activate_run__avx512, Isa::kAvx512,
                                                  "pixel_lanes_ukernel_4phase__avx512"};
#endif
}  // namespace

const PixelLanesUkernel& pixel_lanes_ukernel(Isa isa) {
#if defined(EDGEGAN_HAVE_X86_KERNELS)
  if (isa == Isa::kAvx512) return kPixelLanesAvx512;
#endif
  (void)isa;
  return kNoPixelLanes;
}

const PixelLanesUkernel& pixel_lanes_ukernel() { return pixel_lanes_ukernel(active_isa()); }

}  // namespace edgegan::cpu
