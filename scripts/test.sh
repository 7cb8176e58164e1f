#!/usr/bin/env bash
# The test command (README, .ci/run): installs what it needs, then
#   1. builds the product (Release; CUDA objects when nvcc exists) and runs every test,
#   2. cross-builds for AArch64 and runs the whole suite under qemu-aarch64 (NEON kernels),
#   3. runs the suite again under AddressSanitizer + UndefinedBehaviorSanitizer,
#   4. runs it under ThreadSanitizer (OpenMP via LLVM's libomp + Archer),
#   5. runs each libFuzzer target for FUZZ_SECONDS (default 60) on the seed corpus.
# QUICK=1 stops after step 1 (the everyday loop).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
# Short OpenMP regions on a shared 2-core box: threads must sleep, not spin.
export OMP_WAIT_POLICY=passive

echo "== 1/5 build and test"
scripts/build.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure --no-tests=error -j"$(nproc)"
[ "${QUICK:-0}" = 1 ] && exit 0

echo "== 2/5 AArch64 cross build, tests under qemu-aarch64"
scripts/test_aarch64.sh
echo "== 3/5 AddressSanitizer + UndefinedBehaviorSanitizer"
scripts/sanitize.sh address
echo "== 4/5 ThreadSanitizer"
scripts/sanitize.sh thread
echo "== 5/5 fuzzing"
scripts/fuzz.sh
echo "test stages: 5 passed, 0 failed"
