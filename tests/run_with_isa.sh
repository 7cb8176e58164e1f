#!/usr/bin/env bash
# Runs a test binary with the CPU kernels forced to one family (EDGEGAN_ISA), so
# every SIMD path passes the same tests the default one does. Exits 77 (ctest:
# skipped) when this CPU cannot run the family.
# usage: run_with_isa.sh scalar|avx2|avx512|neon|neonfp16arith COMMAND [ARGS...]
# (COMMAND may be an emulator followed by the binary: a cross build's tests.)
set -u
isa=$1; shift
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true)
has() { [[ " $flags " == *" $1 "* ]]; }
case $isa in
  scalar) ;;
  avx2) has avx2 && has fma && has f16c || { echo "this CPU has no AVX2+FMA+F16C: skipped"; exit 77; }
        # Without AVX-512F the default run already is this family.
        has avx512f || [ -n "${EDGEGAN_ISA:-}" ] || { echo "the default run uses AVX2 on this CPU: skipped as a duplicate"; exit 77; } ;;
  # Where the CPU has AVX-512F the default run already is this family: nothing to add.
  avx512) has avx512f || { echo "this CPU has no AVX-512F: skipped"; exit 77; }
          [ -z "${EDGEGAN_ISA:-}" ] && { echo "the default run uses AVX-512 on this CPU: skipped as a duplicate"; exit 77; } ;;
  neon|neonfp16arith) ;;  # AArch64 builds only; under qemu /proc/cpuinfo is the host's, so the binary checks
  *) echo "run_with_isa.sh: unknown family '$isa'" >&2; exit 2 ;;
esac
EDGEGAN_ISA=$isa OMP_WAIT_POLICY=passive exec "$@"
