// The phase-lanes families' dispatch, and the portable scalar family: 4 positions per
// "vector" of plain floats (the compiler may vectorise it for the baseline ISA), at
// most 8 outputs per call.
#include "kernels_cpu/phase_lanes/phase_lanes_ukernel.h"

#include "kernels_cpu/phase_lanes/phase_lanes_ukernel_impl.h"

namespace edgegan::cpu {
namespace {
struct Lanes4 {
  struct type {
    float v[4];
  };
  static constexpr int width = 4;
  static type zero() { return {{0.f, 0.f, 0.f, 0.f}}; }
  static type load(const float* p) { return {{p[0], p[1], p[2], p[3]}}; }
  static type broadcast(const float* p) { return {{*p, *p, *p, *p}}; }
  static type fma(type a, type b, type c) {
    for (int i = 0; i < 4; ++i) c.v[i] += a.v[i] * b.v[i];
    return c;
  }
  static void store(float* p, type v) {
    for (int i = 0; i < 4; ++i) p[i] = v.v[i];
  }
};
constexpr PhaseLanesUkernel kScalar = phase_lanes_impl::make_family<Lanes4, 16, 8>(Isa::kScalar, "phase_lanes_ukernel__scalar");
}  // namespace

const PhaseLanesUkernel& phase_lanes_ukernel__scalar() { return kScalar; }

const PhaseLanesUkernel& phase_lanes_ukernel(Isa isa) {
#if defined(EDGEGAN_HAVE_X86_KERNELS)
  if (isa == Isa::kAvx512) return phase_lanes_ukernel__avx512();
  if (isa == Isa::kAvx2) return phase_lanes_ukernel__avx2();
#endif
#if defined(EDGEGAN_HAVE_NEON_KERNELS)
  // The fp16-arithmetic family runs the NEON kernels (the weights are widened when packed).
  if (isa == Isa::kNeon || isa == Isa::kNeonFp16Arith) return phase_lanes_ukernel__neon();
#endif
  (void)isa;
  return kScalar;
}

const PhaseLanesUkernel& phase_lanes_ukernel() { return phase_lanes_ukernel(active_isa()); }

const PhaseLanesHalfUkernel* phase_lanes_half_ukernel() {
#if defined(EDGEGAN_HAVE_NEON_FP16_KERNELS)
  if (active_isa() == Isa::kNeonFp16Arith) return &phase_lanes_ukernel__neonfp16arith();
#endif
  return nullptr;
}

}  // namespace edgegan::cpu
