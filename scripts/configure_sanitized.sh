#!/usr/bin/env bash
# Configures the sanitizer build of MODE into ${BUILD_DIR:-build}-MODE (clang,
# RelWithDebInfo at -O2 with line tables). One configuration per mode, shared by its users:
#   address -> ASan + UBSan (+ LSan), and the libFuzzer targets: scripts/sanitize.sh address
#              runs the suites in it and scripts/fuzz.sh the fuzzers, so CI compiles the
#              sources under ASan once, not twice;
#   thread  -> TSan, without the Vulkan backend or the single-threaded suites.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:?usage: scripts/configure_sanitized.sh address|thread}
build=${BUILD_DIR:-build}-$mode
case "$mode" in
  # EDGEGAN_FUZZ adds the fuzz targets and libFuzzer's coverage instrumentation
  # (-fsanitize=fuzzer-no-link); the suites run with it, at a small cost.
  address) args=(-DEDGEGAN_SANITIZE=address,undefined -DEDGEGAN_FUZZ=ON -DEDGEGAN_ISA_RERUNS=ON -DEDGEGAN_WITH_VULKAN=ON) ;;
  # The per-family reruns differ in micro-kernels, not in threading. Vulkan is left out:
  # lavapipe runs shaders on threads of its own, uninstrumented, whose synchronisation
  # (fences) TSan cannot see; the AddressSanitizer build checks the backend's host code.
  thread) args=(-DEDGEGAN_SANITIZE=thread -DEDGEGAN_FUZZ=OFF -DEDGEGAN_ISA_RERUNS=OFF -DEDGEGAN_WITH_VULKAN=OFF) ;;
  *) echo "unknown mode '$mode' (address or thread)" >&2; exit 2 ;;
esac
# Line tables are all a sanitizer's stack trace needs; full debug info made these
# builds the slowest part of CI.
cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" \
  -DEDGEGAN_WITH_CUDA=OFF -DEDGEGAN_BUILD_TESTS=ON -DEDGEGAN_BUILD_BENCHMARKS=OFF "${args[@]}" >/dev/null
