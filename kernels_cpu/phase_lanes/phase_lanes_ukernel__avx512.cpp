// AVX-512 phase-lanes family (phase_lanes_ukernel.h): 16 positions per zmm, up to 16
// (phase, channel) outputs per call (a stride-3 single-channel head's 9 phases take 2
// blocks: 18 accumulators of the 32 registers). Compiled with -mavx512f -mfma.
#include <immintrin.h>

#include "kernels_cpu/phase_lanes/phase_lanes_ukernel_impl.h"

namespace edgegan::cpu {
namespace {
struct Zmm {
  using type = __m512;
  static constexpr int width = 16;
  static type zero() { return _mm512_setzero_ps(); }
  static type load(const float* p) { return _mm512_loadu_ps(p); }
  static type broadcast(const float* p) { return _mm512_set1_ps(*p); }
  static type fma(type a, type b, type c) { return _mm512_fmadd_ps(a, b, c); }
  static void store(float* p, type v) { _mm512_storeu_ps(p, v); }
};
constexpr PhaseLanesUkernel kFamily = phase_lanes_impl::make_family<Zmm, 32, 16>(Isa::kAvx512, "phase_lanes_ukernel__avx512");
}  // namespace

const PhaseLanesUkernel& phase_lanes_ukernel__avx512() { return kFamily; }

}  // namespace edgegan::cpu
