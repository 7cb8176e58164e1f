// Element-wise loops over channels that the compiler should vectorise for the widest
// ISA the CPU has, in files that are otherwise built for baseline x86-64: on x86 GCC
// builds a function marked EDGEGAN_SIMD_CLONES twice, for AVX-512 and baseline, and
// picks one at load time (an ifunc). Elsewhere (AArch64: NEON is baseline) once.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define EDGEGAN_SIMD_CLONES __attribute__((target_clones("avx512f", "default")))
#else
#define EDGEGAN_SIMD_CLONES
#endif
// Loops that read and write through several row pointers that never overlap: without
// it GCC keeps them scalar (the F(2x2, 2x2) transforms: 10.7 ms against 8.0 ms on a
// 128x128x64 layer).
#if defined(__clang__)
#define EDGEGAN_NO_ALIAS_LOOP _Pragma("clang loop vectorize(assume_safety)")
#else
#define EDGEGAN_NO_ALIAS_LOOP _Pragma("GCC ivdep")
#endif
