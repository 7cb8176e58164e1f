// Which SIMD family the CPU kernels run on. x86 picks at run time from CPUID, so
// one binary runs on any x86-64 machine and uses AVX-512 or AVX2+FMA where the
// CPU (and the OS, for the wider register state) supports them. AArch64 always
// has NEON (Advanced SIMD with FMA is part of ARMv8-A), so the NEON family is
// chosen at compile time there; a build with EDGEGAN_NEON_FP16_ARITH=ON adds
// neonfp16arith (the NEON kernels, plus half-precision arithmetic for fp16
// weights), chosen at run time when the CPU has the ARMv8.2-A FP16 extension. The
// environment variable EDGEGAN_ISA=scalar|avx2|avx512|neon|neonfp16arith forces a
// family, so every path can be tested and benchmarked on one machine; forcing one
// the CPU lacks is an error.
#pragma once

#include <string_view>

namespace edgegan::cpu {

enum class Isa : int { kScalar = 0, kAvx2 = 1, kAvx512 = 2, kNeon = 3, kNeonFp16Arith = 4 };

// Every family, supported here or not (tests loop over it).
inline constexpr Isa kAllIsas[] = {Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kNeon, Isa::kNeonFp16Arith};

const char* isa_name(Isa isa);

// Parses "scalar", "avx2", "avx512", "neon" or "neonfp16arith"; throws std::invalid_argument naming the choices.
Isa parse_isa(std::string_view name);

// Whether this build contains the family's kernels and this CPU can run them.
bool isa_supported(Isa isa);

// The widest supported family.
Isa detected_isa();

// The family the kernels use: EDGEGAN_ISA if set (read once; throws
// std::invalid_argument if it names an unknown or unsupported family), else
// detected_isa(). Sessions and trainers call it at creation so a bad setting is
// reported there, before any kernel runs inside a parallel region.
Isa active_isa();

// Overrides the active family for this process (tests and benchmarks); throws
// std::invalid_argument if it is not supported. Not to be called while kernels run.
void force_isa(Isa isa);

// Restores the previous family on scope exit.
class ScopedIsa {
 public:
  explicit ScopedIsa(Isa isa) : previous_(active_isa()) { force_isa(isa); }
  ~ScopedIsa() { force_isa(previous_); }
  ScopedIsa(const ScopedIsa&) = delete;
  ScopedIsa& operator=(const ScopedIsa&) = delete;

 private:
  Isa previous_;
};

}  // namespace edgegan::cpu
