#include "kernels_cpu/common/cpu_isa.h"

#include <atomic>
#include <cstdlib>
#include <stdexcept>
#include <string>

#if defined(EDGEGAN_HAVE_X86_KERNELS)
#include <cpuid.h>
#endif
#if defined(EDGEGAN_HAVE_NEON_FP16_KERNELS)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace edgegan::cpu {
namespace {

// -1 until first use; then the active family.
std::atomic<int> g_active{-1};

#if defined(EDGEGAN_HAVE_X86_KERNELS)
// CPUID leaf 1, ECX bit 29. (clang's __builtin_cpu_supports does not know "f16c".)
bool cpu_has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
}
#endif

bool cpu_has(Isa isa) {
#if defined(EDGEGAN_HAVE_X86_KERNELS)
  // libgcc's feature check also asks the OS (XGETBV) whether it saves the
  // YMM/ZMM state, so a CPU with AVX-512 under an OS that disabled it reports no.
  switch (isa) {
    case Isa::kScalar: return true;
    case Isa::kAvx2:  // F16C widens fp16 weights; every AVX2 CPU has it
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpu_has_f16c();
    case Isa::kAvx512: return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
    case Isa::kNeon:
    case Isa::kNeonFp16Arith: return false;
  }
  return false;
#elif defined(EDGEGAN_HAVE_NEON_KERNELS)
  // Advanced SIMD (with fused multiply-add) is mandatory in ARMv8-A; the FP16
  // arithmetic extension (ARMv8.2-A) is optional, and the kernel asks Linux.
  if (isa == Isa::kNeonFp16Arith) {
#if defined(EDGEGAN_HAVE_NEON_FP16_KERNELS)
    return (getauxval(AT_HWCAP) & HWCAP_ASIMDHP) != 0;
#else
    return false;
#endif
  }
  return isa == Isa::kScalar || isa == Isa::kNeon;
#else
  return isa == Isa::kScalar;
#endif
}

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
    case Isa::kNeon: return "neon";
    case Isa::kNeonFp16Arith: return "neonfp16arith";
  }
  return "unknown";
}

Isa parse_isa(std::string_view name) {
  for (Isa isa : kAllIsas)
    if (name == isa_name(isa)) return isa;
  throw std::invalid_argument("unknown instruction set '" + std::string(name) + "' (expected scalar, avx2, avx512, neon or neonfp16arith)");
}

bool isa_supported(Isa isa) { return cpu_has(isa); }

Isa detected_isa() {
  for (Isa isa : {Isa::kAvx512, Isa::kAvx2, Isa::kNeonFp16Arith, Isa::kNeon})
    if (cpu_has(isa)) return isa;
  return Isa::kScalar;
}

void force_isa(Isa isa) {
  if (!isa_supported(isa))
    throw std::invalid_argument(std::string("instruction set ") + isa_name(isa) + " is not supported by this CPU or build (best: " +
                                isa_name(detected_isa()) + ")");
  g_active.store(static_cast<int>(isa), std::memory_order_relaxed);
}

Isa active_isa() {
  int v = g_active.load(std::memory_order_relaxed);
  if (v >= 0) return static_cast<Isa>(v);
  Isa isa = detected_isa();
  if (const char* env = std::getenv("EDGEGAN_ISA"); env != nullptr && *env != '\0') {
    try {
      isa = parse_isa(env);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("EDGEGAN_ISA: ") + e.what());
    }
    if (!isa_supported(isa))
      throw std::invalid_argument(std::string("EDGEGAN_ISA=") + env + ": not supported by this CPU or build (best: " +
                                  isa_name(detected_isa()) + ")");
  }
  int expected = -1;
  g_active.compare_exchange_strong(expected, static_cast<int>(isa), std::memory_order_relaxed);
  return static_cast<Isa>(g_active.load(std::memory_order_relaxed));
}

}  // namespace edgegan::cpu
