#!/usr/bin/env bash
# Builds the test suite with sanitizers (clang, OpenMP from LLVM's libomp) and runs it.
#   scripts/sanitize.sh address   -> AddressSanitizer + UndefinedBehaviorSanitizer (+ LeakSanitizer)
#   scripts/sanitize.sh thread    -> ThreadSanitizer; OpenMP made visible to it by LLVM's Archer tool
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:?usage: scripts/sanitize.sh address|thread}
scripts/configure_sanitized.sh "$mode"  # refuses a mode other than address or thread
build=${BUILD_DIR:-build}-$mode
cmake --build "$build" -j"$(nproc)"

export OMP_WAIT_POLICY=passive
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
# The Vulkan tests run on Mesa's lavapipe, which keeps allocations past its teardown:
# those libraries' leaks are suppressed (the list names no library of this project).
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan_suppressions.txt:print_suppressions=0"
if [ "$mode" = thread ]; then
  # Archer tells TSan about OpenMP's synchronisation; without it every parallel
  # region would be a false report.
  archer=$(ls /usr/lib/llvm-*/lib/libarcher.so 2>/dev/null | head -n 1)
  [ -n "$archer" ] || { echo "libarcher.so not found (apt install libomp-14-dev)" >&2; exit 1; }
  export OMP_TOOL_LIBRARIES=$archer
  export TSAN_OPTIONS="ignore_noninstrumented_modules=1:halt_on_error=1:second_deadlock_stack=1"
fi
ctest --test-dir "$build" --output-on-failure --no-tests=error -j"$(nproc)"
