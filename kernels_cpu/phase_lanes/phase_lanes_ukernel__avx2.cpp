// AVX2+FMA phase-lanes family (phase_lanes_ukernel.h): 8 positions per ymm; with 16
// registers at most 12 outputs per call (one block), so wider layers take several
// passes. Compiled with -mavx2 -mfma.
#include <immintrin.h>

#include "kernels_cpu/phase_lanes/phase_lanes_ukernel_impl.h"

namespace edgegan::cpu {
namespace {
struct Ymm {
  using type = __m256;
  static constexpr int width = 8;
  static type zero() { return _mm256_setzero_ps(); }
  static type load(const float* p) { return _mm256_loadu_ps(p); }
  static type broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  static type fma(type a, type b, type c) { return _mm256_fmadd_ps(a, b, c); }
  static void store(float* p, type v) { _mm256_storeu_ps(p, v); }
};
constexpr PhaseLanesUkernel kFamily = phase_lanes_impl::make_family<Ymm, 16, 12>(Isa::kAvx2, "phase_lanes_ukernel__avx2");
}  // namespace

const PhaseLanesUkernel& phase_lanes_ukernel__avx2() { return kFamily; }

}  // namespace edgegan::cpu
