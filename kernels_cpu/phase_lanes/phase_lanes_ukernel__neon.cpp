// AArch64 NEON phase-lanes family (phase_lanes_ukernel.h): 4 positions per q register,
// 32 registers, up to 16 outputs per call.
#include <arm_neon.h>

#include "kernels_cpu/phase_lanes/phase_lanes_ukernel_impl.h"

namespace edgegan::cpu {
namespace {
struct Q {
  using type = float32x4_t;
  static constexpr int width = 4;
  static type zero() { return vdupq_n_f32(0.f); }
  static type load(const float* p) { return vld1q_f32(p); }
  static type broadcast(const float* p) { return vld1q_dup_f32(p); }
  static type fma(type a, type b, type c) { return vfmaq_f32(c, a, b); }
  static void store(float* p, type v) { vst1q_f32(p, v); }
};
constexpr PhaseLanesUkernel kFamily = phase_lanes_impl::make_family<Q, 32, 16>(Isa::kNeon, "phase_lanes_ukernel__neon");
}  // namespace

const PhaseLanesUkernel& phase_lanes_ukernel__neon() { return kFamily; }

}  // namespace edgegan::cpu
