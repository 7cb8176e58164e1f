#!/usr/bin/env bash
# The test command (README, .ci/run): installs what it needs, then
#   1. builds the product (Release; CUDA objects when nvcc exists) and runs every test,
#   2. installs it into a temporary prefix and builds samples/consumer against the
#      package (CMake and pkg-config), builds the Python wheel, installs it into a
#      fresh venv, runs the Python tests and fuzzes the module's argument checking
#      for FUZZ_SECONDS (scripts/test_package.sh),
#   3. cross-builds for AArch64 and runs the whole suite under qemu-aarch64 (NEON kernels),
#   4. runs the suite again under AddressSanitizer + UndefinedBehaviorSanitizer,
#   5. runs each libFuzzer target for FUZZ_SECONDS (default 60) on the seed corpus
#      (built in stage 4's build),
#   6. with TSAN=1 only: the multi-threaded suites under ThreadSanitizer (OpenMP via
#      LLVM's libomp + Archer). Its build and run take about 8 minutes on 2 cores, which
#      CI's hour does not have beside the other five; run it after touching threading code.
# QUICK=1 stops after step 1 (the everyday loop).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
# Short OpenMP regions on a shared 2-core box: threads must sleep, not spin.
export OMP_WAIT_POLICY=passive
# Seconds per fuzz target (libFuzzer and the Python argument fuzzer): 8 targets at 30 s keep
# CI inside its time on 2 cores; longer runs belong to the nightly-style
# `FUZZ_SECONDS=900 scripts/fuzz.sh`.
export FUZZ_SECONDS=${FUZZ_SECONDS:-30}
# Every build through ccache, paths relative to the checkout: the wheel's build (stage 2,
# build-wheel/ at the same depth as build/) recompiles the kernels, the converter and the
# picture codecs with stage 1's flags, and a machine that ran CI before keeps its cache.
# EDGEGAN_CCACHE=0 turns it off.
if [ "${EDGEGAN_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_CUDA_COMPILER_LAUNCHER=ccache
  export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1 CCACHE_SLOPPINESS=pch_defines,time_macros
fi

# Each stage's wall time, so CI's budget (under 60 minutes on 2 cores) can be watched.
stage_start=$SECONDS
stage() { echo "   (took $((SECONDS - stage_start)) s)"; stage_start=$SECONDS; echo "== $1"; }
stages=5
[ "${TSAN:-0}" = 1 ] && stages=6
echo "== 1/$stages build and test"
scripts/build.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure --no-tests=error -j"$(nproc)"
[ "${QUICK:-0}" = 1 ] && exit 0

stage "2/$stages install, consumer project, Python wheel and its tests"
scripts/test_package.sh
stage "3/$stages AArch64 cross build, tests under qemu-aarch64"
scripts/test_aarch64.sh
stage "4/$stages AddressSanitizer + UndefinedBehaviorSanitizer"
scripts/sanitize.sh address
stage "5/$stages fuzzing"
scripts/fuzz.sh
if [ "$stages" = 6 ]; then
  stage "6/6 ThreadSanitizer"
  scripts/sanitize.sh thread
fi
echo "   (took $((SECONDS - stage_start)) s)"
echo "test stages: $stages passed, 0 failed in $SECONDS s"
